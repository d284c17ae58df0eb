import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import { requireWrite } from '../auth/middleware.js';
import type { AppEnv } from '../deps.js';
import { ApiError, badRequest } from '../errors.js';
import { bearerSecurity, ErrorSchema, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { publicBase } from '../oauth/base-url.js';
import { loadProject, MANAGERS, requireProject } from '../projects/access.js';
import { DROP_MIN_BASELINE } from './alert-conditions.js';
import { alertStore, MAX_ALERTS, type Alert, type AlertState } from './alert-store.js';
import { EMAIL_NOT_CONFIGURED, requireMailer } from './mailer.js';
import { AlertBody, AlertList, AlertView, OkView } from './schemas.js';
import { assertWebhookTarget, webhookPolicy } from '../jobs/webhook-target.js';

export const AlertMessages = {
  notFound: 'Alert not found',
  tooMany: `A project can have at most ${MAX_ALERTS} alerts`,
} as const;

const IdParam = v.object({ domain: v.string(), id: v.string() });

const view = (a: Alert, state: AlertState | undefined, secret?: string) => ({
  id: a.id,
  type: a.type,
  visitors: a.visitors,
  percent: a.percent,
  hours: a.hours,
  email: a.email,
  webhookUrl: a.webhookUrl,
  cooldownHours: a.cooldownHours,
  createdAt: a.createdAt,
  lastFiredAt: state?.lastFiredAt ? new Date(state.lastFiredAt).toISOString() : null,
  ...(secret ? { webhookSecret: secret } : {}),
});

/** Write scope first (403), then the manager role (404 like a missing project). */
const managers = requireProject(MANAGERS);

/** Traffic alerts under /api/v1/projects/:domain (owner or admin, write scope). */
export function alertRoutes() {
  const app = new Hono<AppEnv>();

  app.post(
    '/:domain/alerts',
    describeRoute({
      tags: ['Notifications'],
      summary: 'Create a traffic alert (owner or admin, write scope)',
      description:
        '`spike` with `visitors`: unique visitors in the last 60 minutes ≥ it. `drop` with `percent` (1–99): visitors of the ' +
        `last 24 hours ≤ that % of the same 24 hours one week earlier, which must have had ≥ ${DROP_MIN_BASELINE} visitors. ` +
        '`silent` with `hours` (1–72): no event at all for that long, after events in the 24 hours before. Evaluated on ' +
        'every jobs run. An alert fires once, then not again until `cooldownHours` (1–168, default 12) have passed and its ' +
        'condition has cleared and returned. Delivery: `email` (up to 20 addresses; 409 when the server has no email) and/or ' +
        '`webhookUrl` (https): a JSON POST signed `X-Sightline-Signature: sha256=<HMAC-SHA256 of the body>` with ' +
        '`webhookSecret` (returned only here), carrying `text` (Slack) and `content` (Discord) with the message.',
      security: bearerSecurity,
      responses: { 201: json('The new alert with its webhookSecret', AlertView), ...errorsFor(400, 401, 403, 404), 409: json(EMAIL_NOT_CONFIGURED, ErrorSchema), ...errorsFor(429) },
    }),
    requireWrite(),
    managers,
    validate('json', AlertBody),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const { redis, clock, mailer } = c.get('services').deps;
      const body = c.req.valid('json');
      if (body.email.length > 0) requireMailer(mailer);
      await assertWebhookTarget(body.webhookUrl, webhookPolicy(c.get('services').deps));
      const alert = await alertStore.create(
        redis,
        project.id,
        {
          type: body.type,
          visitors: body.type === 'spike' ? body.visitors! : null,
          percent: body.type === 'drop' ? body.percent! : null,
          hours: body.type === 'silent' ? body.hours! : null,
          email: body.email,
          webhookUrl: body.webhookUrl,
          cooldownHours: body.cooldownHours,
          baseUrl: publicBase(c),
        },
        clock.now(),
      );
      if (!alert) throw badRequest(AlertMessages.tooMany);
      return c.json(view(alert, undefined, alert.webhookUrl ? alert.secret : undefined), 201);
    },
  );

  app.get(
    '/:domain/alerts',
    describeRoute({
      tags: ['Notifications'],
      summary: 'Traffic alerts of the project, oldest first (owner or admin, write scope)',
      security: bearerSecurity,
      responses: { 200: json('Alerts', AlertList), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    managers,
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const { redis } = c.get('services').deps;
      const [alerts, states] = await Promise.all([alertStore.list(redis, project.id), alertStore.states(redis, project.id)]);
      return c.json({ alerts: alerts.map((a) => view(a, states[a.id])) });
    },
  );

  app.delete(
    '/:domain/alerts/:id',
    describeRoute({
      tags: ['Notifications'],
      summary: 'Delete a traffic alert (owner or admin, write scope)',
      security: bearerSecurity,
      responses: { 200: json('Deleted', OkView), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    managers,
    validate('param', IdParam),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      if (!(await alertStore.remove(c.get('services').deps.redis, project.id, c.req.valid('param').id))) throw new ApiError(404, AlertMessages.notFound);
      return c.json({ ok: true as const });
    },
  );

  return app;
}
