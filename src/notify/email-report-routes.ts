import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import { requireWrite } from '../auth/middleware.js';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { bearerSecurity, ErrorSchema, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { publicBase } from '../oauth/base-url.js';
import { loadProject, MANAGERS, requireProject } from '../projects/access.js';
import { byCredential, rateLimit } from '../ratelimit.js';
import { emailReportStore, type EmailReport } from './email-report-store.js';
import { EMAIL_NOT_CONFIGURED, requireMailer } from './mailer.js';
import { completedSpan } from './report-periods.js';
import { sendReport } from './report-send.js';
import { EmailReportBody, EmailReportView, OkView, SendResultView } from './schemas.js';

export const EmailReportMessages = {
  notFound: 'No email report for this project',
  allFailed: 'Email delivery failed for every recipient',
} as const;

const notConfigured = json(EMAIL_NOT_CONFIGURED, ErrorSchema);

const view = (report: EmailReport, recipients: string[]) => ({
  frequency: report.frequency,
  recipients,
  nextRunAt: new Date(report.nextRunAt).toISOString(),
  lastSentAt: report.lastSentAt,
  lastResult: report.lastResult,
  createdAt: report.createdAt,
  updatedAt: report.updatedAt,
});

/** Write scope first (403), then the manager role (404 like a missing project). */
const managers = requireProject(MANAGERS);

/**
 * Email reports under /api/v1/projects/:domain (owner or admin, write scope): the settings, and
 * "send now". Setting one up or sending needs email on the server (409 otherwise); reading and
 * deleting work without, so a report can be inspected and removed after email was turned off.
 */
export function emailReportRoutes() {
  const app = new Hono<AppEnv>();

  app.put(
    '/:domain/email-reports',
    describeRoute({
      tags: ['Notifications'],
      summary: 'Create or replace the email report (owner or admin, write scope)',
      description:
        '`frequency` weekly: the last whole week Monday–Sunday, sent Monday after 08:00 in the project time zone; monthly: the ' +
        'last whole month, sent on the 1st after 08:00. Content: visitors, pageviews, sessions, bounce rate and visit duration ' +
        'with their change vs the period before, top 5 pages, sources, countries and conversion goals, a dashboard link. ' +
        '`recipients`: 1 to 20 addresses; each email carries a signed one-click unsubscribe link (RFC 8058) for that recipient. ' +
        '201 when created, 200 when replaced; 409 when the server has no email configured.',
      security: bearerSecurity,
      responses: {
        200: json('The email report', EmailReportView),
        201: json('The new email report', EmailReportView),
        ...errorsFor(400, 401, 403, 404),
        409: notConfigured,
        ...errorsFor(429),
      },
    }),
    requireWrite(),
    managers,
    validate('json', EmailReportBody),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const { redis, clock, mailer } = c.get('services').deps;
      requireMailer(mailer);
      const body = c.req.valid('json');
      const { report, created } = await emailReportStore.put(redis, project.id, { ...body, baseUrl: publicBase(c) }, project.timeZone, clock.now());
      return c.json(view(report, [...body.recipients].sort()), created ? 201 : 200);
    },
  );

  app.get(
    '/:domain/email-reports',
    describeRoute({
      tags: ['Notifications'],
      summary: 'The email report (owner or admin, write scope)',
      security: bearerSecurity,
      responses: { 200: json('The email report', EmailReportView), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    managers,
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const found = await emailReportStore.get(c.get('services').deps.redis, project.id);
      if (!found) throw new ApiError(404, EmailReportMessages.notFound);
      return c.json(view(found.report, found.recipients));
    },
  );

  app.delete(
    '/:domain/email-reports',
    describeRoute({
      tags: ['Notifications'],
      summary: 'Stop the email report (owner or admin, write scope)',
      security: bearerSecurity,
      responses: { 200: json('Deleted', OkView), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    managers,
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      if (!(await emailReportStore.remove(c.get('services').deps.redis, project.id))) throw new ApiError(404, EmailReportMessages.notFound);
      return c.json({ ok: true as const });
    },
  );

  app.post(
    '/:domain/email-reports/send',
    describeRoute({
      tags: ['Notifications'],
      summary: 'Send the report of the last complete period now, to every recipient (owner or admin, write scope)',
      description:
        'The last whole week (Monday–Sunday) or month before now in the project time zone. Does not change the schedule. ' +
        'Rate limited like the export (`RATE_LIMIT_EXPORT_PER_MIN` per credential). 502 when no recipient could be reached.',
      security: bearerSecurity,
      responses: {
        200: json('Who got it', SendResultView),
        ...errorsFor(401, 403, 404),
        409: notConfigured,
        ...errorsFor(429),
        502: json(EmailReportMessages.allFailed, ErrorSchema),
      },
    }),
    requireWrite(),
    managers,
    rateLimit('export', byCredential),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const deps = c.get('services').deps;
      const mailer = requireMailer(deps.mailer);
      const found = await emailReportStore.get(deps.redis, project.id);
      if (!found) throw new ApiError(404, EmailReportMessages.notFound);
      const span = completedSpan(found.report.frequency, project.timeZone, deps.clock.now());
      const result = await sendReport({ ...deps, mailer }, project, { frequency: found.report.frequency, recipients: found.recipients, span, base: publicBase(c) });
      if (result.sent.length === 0 && result.failed.length > 0) {
        throw new ApiError(502, `${EmailReportMessages.allFailed}: ${result.failed[0]!.error}`);
      }
      return c.json({ frequency: found.report.frequency, from: new Date(span.from).toISOString(), to: new Date(span.to).toISOString(), ...result });
    },
  );

  return app;
}
