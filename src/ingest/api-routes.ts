import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import { requireWrite } from '../auth/middleware.js';
import type { AppEnv } from '../deps.js';
import { ApiError, Messages } from '../errors.js';
import { bodyTooLarge } from '../http/body-limit.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { loadProject, MANAGERS } from '../projects/access.js';
import { BufferFullError } from './batcher.js';
import { readLimited } from './body.js';
import { HitsBody, firstIssue } from './event-schema.js';
import { recordHits } from './hits.js';
import { IMPORT_READ_WAIT_MS, importNdjson } from './import.js';
import { logError } from '../log.js';

/**
 * Hits bodies hold at most 1000 entries, typically 300–600 bytes each (path, user agent, IP, time):
 * 2 MB leaves room for 2 KB an entry on average. The app-level body limit (src/app.ts) applies it.
 */
export const MAX_HITS_BYTES = 2 * 1024 * 1024;

const HitsResult = v.object({
  accepted: v.number(),
  bots: v.number(),
  rejected: v.number(),
  errors: v.array(v.object({ index: v.number(), error: v.string() })),
});

const ImportResult = v.object({
  imported: v.number(),
  rejected: v.number(),
  errors: v.array(v.object({ line: v.number(), error: v.string() })),
});

const BatchId = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'X-Import-Batch-Id must be 1–128 letters, digits, dots, colons, dashes or underscores'),
);

const unavailable = () => new ApiError(503, Messages.unavailable, { 'Retry-After': '5' });

/** Server-side hits and NDJSON import under /api/v1/projects/:domain (write scope, owner or admin). */
export function ingestApiRoutes() {
  const app = new Hono<AppEnv>();

  app.post(
    '/:domain/hits',
    describeRoute({
      tags: ['Ingestion'],
      summary: 'Record server-side request logs (bots and humans)',
      description:
        'JSON array of at most 1000 `{ts?, path, userAgent, ip, status?, referrer?}`. Bot user agents are recorded as bot hits ' +
        '(verified against the operator’s published IP ranges), the rest as pageviews enriched like tracker events. ' +
        'Entries that fail validation are listed by 0-based index in `errors`; the others are kept.',
      security: bearerSecurity,
      responses: { 200: json('What was recorded', HitsResult), ...errorsFor(400, 401, 403, 404, 413, 429, 503) },
    }),
    requireWrite(),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const bytes = await readLimited(c.req.raw, MAX_HITS_BYTES);
      if (!bytes) throw bodyTooLarge(MAX_HITS_BYTES);
      let body: unknown;
      try {
        body = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        throw new ApiError(400, 'Body must be a JSON array of hits');
      }
      const parsed = v.safeParse(HitsBody, body);
      if (!parsed.success) throw new ApiError(400, firstIssue(parsed.issues));
      const services = c.get('services');
      try {
        return c.json(await recordHits(services.ingest, services.deps, project, parsed.output));
      } catch (err) {
        if (err instanceof BufferFullError) throw unavailable();
        throw err;
      }
    },
  );

  app.post(
    '/:domain/import',
    describeRoute({
      tags: ['Ingestion'],
      summary: 'Import historical events (NDJSON, streamed)',
      description:
        'Content-Type `application/x-ndjson`, one event a line: `{timestamp, kind, visitorId, sessionId, url, referrer?, countryCode?, region?, city?, browser?, os?, device?, name?, props?, amountCents?, currency?, durationMs?, vitals?}`. ' +
        'Any size (streamed). Bad lines are listed by 1-based line number (first 100) and skipped; good lines are kept. ' +
        'Send `X-Import-Batch-Id` to make a retry of the same file store nothing twice.',
      security: bearerSecurity,
      responses: { 200: json('Import summary', ImportResult), ...errorsFor(400, 401, 403, 404, 429, 503) },
    }),
    requireWrite(),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const type = (c.req.header('content-type') ?? '').split(';', 1)[0].trim().toLowerCase();
      if (type !== 'application/x-ndjson') throw new ApiError(415, 'Content-Type must be application/x-ndjson');
      const header = c.req.header('x-import-batch-id');
      let batchId: string | undefined;
      if (header !== undefined) {
        const checked = v.safeParse(BatchId, header);
        if (!checked.success) throw new ApiError(400, checked.issues[0].message);
        batchId = checked.output;
      }
      const body = c.req.raw.body;
      if (!body) return c.json({ imported: 0, rejected: 0, errors: [] });
      try {
        const { rowStore, importParsers, readsInFlight } = c.get('services').deps;
        // A viewer's answer comes first: each chunk waits (a bounded time) for the reads being answered.
        const beforeParse = readsInFlight && (() => readsInFlight.settled(IMPORT_READ_WAIT_MS));
        return c.json(await importNdjson(rowStore, body, { project, batchId, parsers: importParsers, beforeParse }));
      } catch (err) {
        if (err instanceof ApiError) throw err;
        logError('[sightline] import failed', err);
        throw unavailable();
      }
    },
  );

  return app;
}
