import type { Redis } from '@upstash/redis';
import type { ClickHouseClient } from './adapters/clickhouse.js';
import type { RowStore } from './adapters/row-store.js';
import type { Clock } from './adapters/clock.js';
import type { Config } from './config.js';
import type { EventSink } from './ingest/sink.js';

/** Everything the app needs from the outside world; the entry points build it. */
export interface Deps {
  config: Config;
  /** ClickHouse for queries and schema changes… */
  clickhouse: ClickHouseClient;
  /** …and the port every ingest insert goes through (server or embedded, see adapters/row-store.ts). */
  rowStore: RowStore;
  redis: Redis;
  clock: Clock;
  /** Where accepted events go: a batcher on Node, a queue on Workers. */
  sink: EventSink;
  /** Optional: geo lookup of an IP (Node: MaxMind database). Workers use `request.cf`. */
  geo?: import('./ingest/geo.js').GeoLookup;
  /** Optional: DNS for reverse-DNS crawler verification (Node: node:dns). Workers rely on `request.cf`. */
  dns?: import('./ingest/enrich/bot-rdns.js').DnsResolver;
  /** Optional: parses imports off the request thread (Node: worker threads). Without it the request thread parses. */
  importParsers?: import('./ingest/import-pool.js').ImportParserPool;
  /**
   * Optional: the read requests being answered in this process (src/http/reads-in-flight.ts), shared
   * by its apps; an import parses its next chunk only once they are answered or after a bounded wait.
   */
  readsInFlight?: import('./http/reads-in-flight.js').ReadsInFlight;
  /** Where scheduled exports are written: R2 on Workers, DATA_DIR/exports on Node. */
  exportStore?: ExportStore;
  /** Optional: resolves webhook hosts for the SSRF check (Node: node:dns). Workers check IP literals only. */
  webhookResolver?: import('./net/host-resolver.js').HostResolver;
  /** Optional: sends webhooks to the checked address (Node). Without it the global fetch is used. */
  webhookFetch?: import('./jobs/webhook.js').Fetch;
  /**
   * PBKDF2 iterations of new password hashes (src/auth/password.ts: 600,000 when unset). Not an
   * environment variable: only the test harness lowers it, so suites that create many accounts stay fast.
   */
  passwordIterations?: number;
  /**
   * Optional: the per-project data versions every write moves (src/adapters/data-version.ts); reports
   * read the closed-hours version to reuse the sums of closed hours (src/analysis/closed-hours.ts).
   */
  dataVersions?: import('./adapters/data-version.js').DataVersions;
  /**
   * Optional: runs work after the answer without holding the request (a part of closed hours summed
   * after its first question was answered by the whole pass; on Workers kept alive by the request's
   * waitUntil). Without it that work runs before the answer.
   */
  background?: import('./adapters/background.js').Background;
  /**
   * Optional: the cached parts this process knows stored (src/reports/stored-parts.ts); without it
   * reports read no closed-days part, and a part of closed hours' visits is looked for at every read.
   */
  storedParts?: import('./reports/stored-parts.js').StoredParts;
  /** Optional: the open sessions' floors this process measured (src/analysis/open-floors.ts); without it reads sum them in each statement. */
  openFloors?: import('./analysis/open-floors.js').OpenFloors;
  /** Optional: how narrow a slice last held each project's latest visitors (src/reports/visitor-slices.ts); without it the visitors list looks at the last day first. */
  visitorSlices?: import('./reports/visitor-slices.js').VisitorSlices;
  /** Optional: the mark of the vitals table as this process read it (src/reports/vitals-mark.ts); without it the performance report reads both tables, split at the mark, in each statement. */
  vitalsMark?: import('./reports/vitals-mark.js').VitalsMark;
  /** Optional: reuses report answers while the project's data version stays (src/reports/answer-cache.ts); the entry points give it. */
  answers?: import('./reports/answer-cache.js').AnswerCache;
  /**
   * Set by the answer cache on the deps an answer is computed with: an instant no earlier than any
   * row of the project stored (src/reports/latest-row.ts), known once per data version, so reports
   * need not ask whether rows after now exist (src/reports/query.ts).
   */
  latestRow?: { projectId: string; at: Promise<number> };
  /**
   * Set with latestRow: the project's closed-hours version and its floorless mark
   * (DataVersions.closedHours; null when it could not be read), read once for everything an answer
   * computes (src/analysis/closed-hours.ts).
   */
  closedHours?: { projectId: string; state: import('./adapters/data-version.js').ClosedHours | null };
  /** Outgoing email (reports, alerts): SMTP on Node, an email API on Workers; absent when not configured (routes answer 409). */
  mailer?: import('./notify/mailer.js').Mailer;
}

/** A flat store of export files by name. */
export interface ExportStore {
  put(name: string, csv: string): Promise<void>;
  list(prefix: string): Promise<{ name: string; size: number; createdAt: string }[]>;
  get(name: string): Promise<string | null>;
  /** Deletes every file whose name starts with `prefix` (a project's folder, when it is deleted). */
  removeAll(prefix: string): Promise<void>;
}

/** Hono environment shared by every route. */
export interface AppEnv {
  Variables: {
    services: import('./services.js').Services;
    auth: import('./auth/context.js').AuthContext;
    /** The `{domain}` project as loaded for this request (see projects/access.ts). */
    projectAccess: import('./projects/access.js').ProjectAccess | null;
  };
}
