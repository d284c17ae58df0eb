import { Redis as UpstashRedis } from '@upstash/redis';
import { backgroundTasks } from '../adapters/background.js';
import { StoredParts } from '../reports/stored-parts.js';
import { VitalsMark } from '../reports/vitals-mark.js';
import { OpenFloors } from '../analysis/open-floors.js';
import { VisitorSlices } from '../reports/visitor-slices.js';
import { connectNodeClickHouse, type NodeClickHouseOptions } from '../adapters/node-clickhouse.js';
import { systemClock, type Clock } from '../adapters/clock.js';
import { migrate } from '../adapters/migrate.js';
import { redisDataVersions } from '../adapters/data-version.js';
import { connectRespRedis } from '../adapters/redis-resp.js';
import { versionedRowStore } from '../adapters/versioned-row-store.js';
import { logError } from '../log.js';
import { AnswerCache } from '../reports/answer-cache.js';
import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import type { EventSink } from '../ingest/sink.js';
import { nodeWebhookFetch } from '../jobs/node-webhook-fetch.js';
import { nodeHostResolver } from '../net/node-host-resolver.js';
import { createReadsInFlight } from '../http/reads-in-flight.js';

export interface NodeRuntime {
  deps: Deps;
  /** Flushes buffered events, then closes Redis and ClickHouse. */
  close(): Promise<void>;
}

/** How long closing waits for background tasks (they only keep caches) before leaving them behind. */
const BACKGROUND_CLOSE_MS = 2000;

/** The ClickHouse of a Config: the server at CLICKHOUSE_URL, else the embedded engine under DATA_DIR. */
export const clickHouseOptions = (config: Config): NodeClickHouseOptions => ({
  url: config.CLICKHOUSE_URL,
  username: config.CLICKHOUSE_USER,
  password: config.CLICKHOUSE_PASSWORD,
  database: config.CLICKHOUSE_DATABASE,
  dataDir: config.DATA_DIR,
  readsBeside: config.EMBEDDED_READS_BESIDE,
});

/**
 * Wires the Node runtime's adapters from a parsed Config: Redis over RESP (or Upstash REST),
 * ClickHouse over HTTP or embedded, migrations applied. `makeSink` chooses the event sink.
 */
export async function buildNodeRuntime(
  config: Config,
  opts: {
    clock?: Clock;
    makeSink: (deps: Omit<Deps, 'sink'>) => EventSink;
    geo?: Deps['geo'];
    dns?: Deps['dns'];
    importParsers?: Deps['importParsers'];
    /** The Redis hash of the data versions (DATA_VERSION_KEY): one per ClickHouse store, so stores sharing a Redis keep their own. */
    dataVersionKey?: string;
  },
): Promise<NodeRuntime> {
  let redis: Deps['redis'];
  let closeRedis = async () => {};
  if (config.UPSTASH_REDIS_REST_URL) {
    redis = new UpstashRedis({ url: config.UPSTASH_REDIS_REST_URL, token: config.UPSTASH_REDIS_REST_TOKEN ?? '' });
  } else {
    const resp = await connectRespRedis({ url: config.REDIS_URL });
    redis = resp.redis;
    closeRedis = resp.close;
  }
  const { client: clickhouse, rowStore: store, close: closeClickHouse } = await connectNodeClickHouse(clickHouseOptions(config));
  await migrate(clickhouse, { retentionDays: config.RETENTION_DAYS });
  // Every write moves its projects' data versions, which the answer cache checks before reusing an answer.
  const versions = redisDataVersions(redis, logError, opts.dataVersionKey);
  // Answers asked lately are computed again after each write, so the next viewer is served.
  const clock = opts.clock ?? systemClock;
  const answers = new AnswerCache(versions, undefined, { watchMs: config.ANSWER_REFRESH_MIN * 60_000, clock });
  const background = backgroundTasks();
  const base = {
    config,
    redis,
    clickhouse,
    rowStore: versionedRowStore(store, versions, clock, (projects) => answers.written(projects)),
    dataVersions: versions,
    answers,
    background,
    storedParts: new StoredParts({ retentionDays: config.RETENTION_DAYS }),
    openFloors: new OpenFloors(),
    vitalsMark: new VitalsMark(),
    visitorSlices: new VisitorSlices(),
    clock,
    geo: opts.geo,
    dns: opts.dns,
    importParsers: opts.importParsers,
    // Counted by the app while answered; imports step aside for them (src/http/reads-in-flight.ts).
    readsInFlight: createReadsInFlight(),
    // Webhook hosts are resolved by the system resolver and the request goes to the checked address.
    webhookResolver: nodeHostResolver(),
    webhookFetch: nodeWebhookFetch,
  };
  const sink = opts.makeSink(base);
  return {
    deps: { ...base, sink },
    async close() {
      await sink.close();
      await answers.close();
      // Background work only keeps caches: a task stuck on a hung ClickHouse must not hold the shutdown (src/entry/node.ts).
      await background.settled(BACKGROUND_CLOSE_MS);
      await opts.importParsers?.close();
      await closeRedis();
      await closeClickHouse();
    },
  };
}
