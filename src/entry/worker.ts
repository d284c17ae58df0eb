/// <reference path="./worker-configuration.d.ts" />
/// <reference path="./worker-runtime.d.ts" />
import { AsyncLocalStorage } from 'node:async_hooks';
import { createClient } from '@clickhouse/client-web';
import { Redis } from '@upstash/redis/cloudflare';
import { createApp } from '../app.js';
import { backgroundTasks } from '../adapters/background.js';
import { StoredParts } from '../reports/stored-parts.js';
import { VitalsMark } from '../reports/vitals-mark.js';
import { OpenFloors } from '../analysis/open-floors.js';
import { VisitorSlices } from '../reports/visitor-slices.js';
import type { ClickHouseClient } from '../adapters/clickhouse.js';
import { clickhouseSettings } from '../adapters/clickhouse.js';
import { systemClock } from '../adapters/clock.js';
import { redisDataVersions } from '../adapters/data-version.js';
import { rowsAsObjects, serverRowStore } from '../adapters/row-store.js';
import { versionedRowStore } from '../adapters/versioned-row-store.js';
import { parseConfig, type Config } from '../config.js';
import type { Deps } from '../deps.js';
import { consumeEvents, keepDeadLetters, queueSink, type EventsMessage } from '../ingest/queue-sink.js';
import { dropDeletedProjects } from '../ingest/queue-live-projects.js';
import { r2Quarantine } from '../ingest/r2-quarantine.js';
import { runScheduledJobs } from '../jobs/scheduled.js';
import { logError } from '../log.js';
import { httpMailer } from '../notify/http-mailer.js';
import { AnswerCache } from '../reports/answer-cache.js';

/** Bindings and secrets of the Worker (names from wrangler.toml; secrets set with wrangler). */
export interface WorkerEnv extends Omit<Env, 'EVENTS_QUEUE'> {
  EVENTS_QUEUE: Queue<EventsMessage>;
  [key: string]: unknown;
}

interface Isolate {
  fingerprint: string;
  deps: Deps;
  app: ReturnType<typeof createApp>;
}

let isolate: Isolate | null = null;

/** The request (or cron run) being served, so work it starts in the background is kept alive by its `waitUntil`. */
const requestContexts = new AsyncLocalStorage<ExecutionContext>();

/** String-valued vars and secrets: what the config schema reads. */
const stringVars = (env: WorkerEnv) =>
  Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));

function requireCloud(config: Config): asserts config is Config & { UPSTASH_REDIS_REST_URL: string; CLICKHOUSE_URL: string } {
  if (!config.UPSTASH_REDIS_REST_URL) throw new Error('UPSTASH_REDIS_REST_URL is required on Workers');
  if (!config.CLICKHOUSE_URL) throw new Error('CLICKHOUSE_URL is required on Workers');
}

/** Config is parsed and adapters built once per isolate (again only if the vars change). */
function isolateFor(env: WorkerEnv): Isolate {
  const vars = stringVars(env);
  const fingerprint = JSON.stringify(vars);
  if (isolate && isolate.fingerprint === fingerprint) return isolate;
  const config = parseConfig(vars);
  requireCloud(config);
  const redis = new Redis({ url: config.UPSTASH_REDIS_REST_URL, token: config.UPSTASH_REDIS_REST_TOKEN ?? '', enableTelemetry: false });
  const clickhouse = createClient({
    url: config.CLICKHOUSE_URL,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    database: config.CLICKHOUSE_DATABASE,
    clickhouse_settings: clickhouseSettings,
  }) as unknown as ClickHouseClient;
  // Email through a JSON email API (EMAIL_API_URL, EMAIL_API_KEY); without it the email routes answer 409.
  const mailer = config.EMAIL_API_URL ? httpMailer({ url: config.EMAIL_API_URL, apiKey: config.EMAIL_API_KEY, from: config.SMTP_FROM }) : undefined;
  // Each isolate keeps its own answers; the data versions in Redis tell it when they are stale.
  const versions = redisDataVersions(redis, logError);
  const rowStore = versionedRowStore(serverRowStore(clickhouse, rowsAsObjects), versions, systemClock);
  // Work after the answer (a question's stored part summed once it was answered) lives as long as the request's waitUntil lets it.
  const background = backgroundTasks((task) => requestContexts.getStore()?.waitUntil(task));
  const deps: Deps = { config, redis, clickhouse, rowStore, dataVersions: versions, answers: new AnswerCache(versions), background, storedParts: new StoredParts({ retentionDays: config.RETENTION_DAYS }), openFloors: new OpenFloors(), vitalsMark: new VitalsMark(), visitorSlices: new VisitorSlices(), clock: systemClock, sink: queueSink(env.EVENTS_QUEUE), exportStore: r2ExportStore(env.EXPORTS), mailer };
  isolate = { fingerprint, deps, app: createApp(deps) };
  return isolate;
}

/** Exports written by the scheduled job go to R2. */
function r2ExportStore(bucket: R2Bucket) {
  return {
    async put(name: string, csv: string) {
      await bucket.put(name, csv, { httpMetadata: { contentType: 'text/csv; charset=utf-8' } });
    },
    async list(prefix: string) {
      const { objects } = await bucket.list({ prefix });
      return objects.map((o) => ({ name: o.key, size: o.size, createdAt: o.uploaded.toISOString() }));
    },
    async get(name: string) {
      const obj = await bucket.get(name);
      return obj ? obj.text() : null;
    },
    async removeAll(prefix: string) {
      // R2 lists at most 1000 keys a page and deletes at most 1000 per call.
      for (let cursor: string | undefined; ; ) {
        const page = await bucket.list({ prefix, cursor });
        if (page.objects.length > 0) await bucket.delete(page.objects.map((o) => o.key));
        if (!page.truncated) return;
        cursor = page.cursor;
      }
    },
  };
}

export default {
  fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Response | Promise<Response> {
    let app;
    try {
      app = isolateFor(env).app;
    } catch (err) {
      // The operator reads the cause in the Worker's logs; the client learns nothing of the configuration.
      logError('[sightline] service misconfigured', err);
      return Response.json({ error: 'Service misconfigured' }, { status: 500 });
    }
    return requestContexts.run(ctx, () => app.fetch(request, env, ctx as never));
  },

  async queue(batch: MessageBatch<EventsMessage>, env: WorkerEnv): Promise<void> {
    // The dead-letter queue's consumer keeps what could not be inserted, so nothing is lost silently.
    if (batch.queue.endsWith('-dlq')) {
      await keepDeadLetters(batch, async (name, body) => {
        await env.EXPORTS.put(name, body, { httpMetadata: { contentType: 'application/json' } });
      });
      return;
    }
    // Events of a project deleted while they waited in the queue are not stored; rows ClickHouse
    // refuses as invalid are kept in R2 under quarantine/ (the exports bucket).
    const { deps } = isolateFor(env);
    await consumeEvents(await dropDeletedProjects(batch, deps.redis), deps.rowStore, r2Quarantine(env.EXPORTS));
  },

  /** Cron: salt rotation and due scheduled exports; a failed job fails the run so it shows in the dashboard. */
  async scheduled(controller: ScheduledController, env: WorkerEnv, ctx: ExecutionContext): Promise<void> {
    const { errors } = await requestContexts.run(ctx, () => runScheduledJobs(isolateFor(env).deps, controller.scheduledTime));
    if (errors.length > 0) throw new Error(errors.join('; '));
  },
};
