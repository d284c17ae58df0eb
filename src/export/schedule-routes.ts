import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import { requireWrite } from '../auth/middleware.js';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { assertWebhookTarget, webhookPolicy } from '../jobs/webhook-target.js';
import { loadProject, MANAGERS, requireProject } from '../projects/access.js';
import { REPORT_PERIODS } from '../reports/periods.js';
import { CSV_CONTENT_TYPE } from './negotiate.js';
import { DeletedResult, ExportFileList, ScheduleBody, ScheduleView } from './schedule-schemas.js';
import { scheduleStore, storeName, type ExportSchedule } from './schedule-store.js';

export const ScheduleMessages = {
  scheduleNotFound: 'No export schedule for this project',
  exportNotFound: 'Export not found',
} as const;

/** Stored file names, exactly as the scheduled job makes them; anything else is a 404. */
const FILE_NAME = new RegExp(`^sightline-[a-z0-9._-]{1,253}-(${REPORT_PERIODS.join('|')})-\\d{4}-\\d{2}-\\d{2}\\.csv$`);

const view = (s: ExportSchedule, secret?: string) => ({
  frequency: s.frequency,
  period: s.period,
  limit: s.limit,
  filters: s.filters ?? '',
  webhookUrl: s.webhookUrl,
  nextRunAt: new Date(s.nextRunAt).toISOString(),
  lastRunAt: s.lastRunAt,
  lastFile: s.lastFile,
  lastWebhook: s.lastWebhook ?? null,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
  ...(secret ? { webhookSecret: secret } : {}),
});

/** Write scope first (403), then the manager role (404 like a missing project). */
const managers = requireProject(MANAGERS);

/**
 * Scheduled exports under /api/v1/projects/:domain: the schedule (owner or admin, write scope)
 * and the files the cron wrote (any member).
 */
export function scheduleRoutes() {
  const app = new Hono<AppEnv>();

  app.put(
    '/:domain/export/schedule',
    describeRoute({
      tags: ['Export'],
      summary: 'Create or replace the scheduled export (owner or admin, write scope)',
      description:
        '`frequency` daily | weekly | monthly: the export runs at the next UTC midnight, Monday midnight or 1st of the month, ' +
        'and then every such boundary; a missed run is caught up once. `period` (default `30d`), `limit` (1–500, default 100) ' +
        'and `filters` (text, default none) as in GET …/export. With `webhookUrl` (https, on a public address: hosts that are or resolve to loopback, private, link-local, ' +
        'CGNAT, multicast or reserved addresses are refused with 400, and checked again before each delivery) each run POSTs a JSON notice signed with ' +
        '`X-Sightline-Signature: sha256=<hex HMAC-SHA256 of the body>`; the key is `webhookSecret`, returned only when the ' +
        'schedule is created or `rotateSecret` is true. 201 when created, 200 when replaced.',
      security: bearerSecurity,
      responses: { 200: json('The schedule', ScheduleView), 201: json('The new schedule with its webhookSecret', ScheduleView), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    managers,
    validate('json', ScheduleBody),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const { deps } = c.get('services');
      const body = c.req.valid('json');
      // SSRF: the host must be public now; the job checks again before every delivery.
      await assertWebhookTarget(body.webhookUrl, webhookPolicy(deps));
      const { schedule, created, secretShown } = await scheduleStore.put(deps.redis, project.id, body, deps.clock.now());
      return c.json(view(schedule, secretShown ? schedule.secret : undefined), created ? 201 : 200);
    },
  );

  app.get(
    '/:domain/export/schedule',
    describeRoute({
      tags: ['Export'],
      summary: 'The scheduled export (owner or admin, write scope)',
      security: bearerSecurity,
      responses: { 200: json('The schedule', ScheduleView), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const schedule = await scheduleStore.get(c.get('services').deps.redis, project.id);
      if (!schedule) throw new ApiError(404, ScheduleMessages.scheduleNotFound);
      return c.json(view(schedule));
    },
  );

  app.delete(
    '/:domain/export/schedule',
    describeRoute({
      tags: ['Export'],
      summary: 'Stop the scheduled export (owner or admin, write scope); files already written stay',
      security: bearerSecurity,
      responses: { 200: json('Deleted', DeletedResult), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      if (!(await scheduleStore.remove(c.get('services').deps.redis, project.id))) throw new ApiError(404, ScheduleMessages.scheduleNotFound);
      return c.json({ ok: true as const });
    },
  );

  app.get(
    '/:domain/exports',
    describeRoute({
      tags: ['Export'],
      summary: 'Files written by the scheduled export, newest first',
      security: bearerSecurity,
      responses: { 200: json('Export files', ExportFileList), ...errorsFor(401, 404, 429) },
    }),
    async (c) => {
      const { project } = await loadProject(c);
      const store = c.get('services').deps.exportStore;
      const prefix = storeName(project.id, '');
      const files = store ? await store.list(prefix) : [];
      const exports = files
        .map((f) => ({ name: f.name.slice(prefix.length), size: f.size, createdAt: f.createdAt }))
        .filter((f) => FILE_NAME.test(f.name))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.name.localeCompare(a.name));
      return c.json({ exports });
    },
  );

  app.get(
    '/:domain/exports/:name',
    describeRoute({
      tags: ['Export'],
      summary: 'Download one file written by the scheduled export',
      security: bearerSecurity,
      responses: {
        200: { description: 'The CSV file', content: { 'text/csv': { schema: { type: 'string' } } } },
        ...errorsFor(401, 404, 429),
      },
    }),
    async (c) => {
      const { project } = await loadProject(c);
      const name = c.req.param('name');
      const store = c.get('services').deps.exportStore;
      const csv = FILE_NAME.test(name) && store ? await store.get(storeName(project.id, name)) : null;
      if (csv === null) throw new ApiError(404, ScheduleMessages.exportNotFound);
      return c.body(csv, 200, {
        'Content-Type': CSV_CONTENT_TYPE,
        'Content-Disposition': `attachment; filename="${name}"`,
        'Cache-Control': 'no-store',
      });
    },
  );

  return app;
}
