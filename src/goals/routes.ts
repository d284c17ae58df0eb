import { Hono, type MiddlewareHandler } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import { requireWrite } from '../auth/middleware.js';
import type { AppEnv } from '../deps.js';
import { ApiError, badRequest } from '../errors.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { loadProject, MANAGERS } from '../projects/access.js';
import { CreateFunnelBody, CreateGoalBody, FunnelList, FunnelSchema, GoalSchema, OkResult } from './schemas.js';
import { funnelStore, GoalMessages, goalStore, MAX_FUNNELS, MAX_GOALS } from './store.js';

const IdParam = v.object({ domain: v.string(), id: v.string() });

/** Write scope first (403), then the manager role (404 like a missing project), then the body. */
const managerOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  await loadProject(c, MANAGERS);
  await next();
};

/** Goal and funnel management under /api/v1/projects/:domain. Reading goals and funnel results are reports. */
export function goalRoutes() {
  const app = new Hono<AppEnv>();

  app.post(
    '/:domain/goals',
    describeRoute({
      tags: ['Goals'],
      summary: 'Create a goal (owner or admin, write scope)',
      description:
        'Types: `event` (value = custom or transaction event name), `pageview` (value = path pattern, `*` matches any ' +
        'characters including `/`), `revenue` (value = transaction name), `traffic` (value = referrer source, `""` for all ' +
        'traffic), `engagement` (value `""`: average visit duration). `target` is an optional number ≥ 0.',
      security: bearerSecurity,
      responses: { 201: json('The created goal', GoalSchema), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    managerOnly,
    validate('json', CreateGoalBody),
    async (c) => {
      const body = c.req.valid('json');
      const { redis, clock } = c.get('services').deps;
      const { project } = await loadProject(c, MANAGERS);
      if ((await goalStore.count(redis, project.id)) >= MAX_GOALS) throw badRequest(GoalMessages.tooManyGoals);
      const goal = await goalStore.create(redis, project.id, body, clock.now());
      return c.json(goal, 201);
    },
  );

  app.delete(
    '/:domain/goals/:id',
    describeRoute({
      tags: ['Goals'],
      summary: 'Delete a goal (owner or admin, write scope)',
      security: bearerSecurity,
      responses: { 200: json('Deleted', OkResult), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    validate('param', IdParam),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const removed = await goalStore.remove(c.get('services').deps.redis, project.id, c.req.valid('param').id);
      if (!removed) throw new ApiError(404, GoalMessages.goalNotFound);
      return c.json({ ok: true });
    },
  );

  app.get(
    '/:domain/funnels',
    describeRoute({
      tags: ['Funnels'],
      summary: 'Funnel definitions, oldest first',
      security: bearerSecurity,
      responses: { 200: json('Funnel definitions', FunnelList), ...errorsFor(401, 404, 429) },
    }),
    async (c) => {
      const { project } = await loadProject(c);
      const funnels = await funnelStore.list(c.get('services').deps.redis, project.id);
      return c.json({ funnels: funnels.map(({ id, name, steps, createdAt }) => ({ id, name, steps, createdAt })) });
    },
  );

  app.post(
    '/:domain/funnels',
    describeRoute({
      tags: ['Funnels'],
      summary: 'Create a funnel (owner or admin, write scope)',
      description:
        '2 to 8 steps, each `{type: "pageview", value: path pattern with * wildcards}` or `{type: "event", value: event name}`.',
      security: bearerSecurity,
      responses: { 201: json('The created funnel', FunnelSchema), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    managerOnly,
    validate('json', CreateFunnelBody),
    async (c) => {
      const body = c.req.valid('json');
      const { redis, clock } = c.get('services').deps;
      const { project } = await loadProject(c, MANAGERS);
      if ((await funnelStore.count(redis, project.id)) >= MAX_FUNNELS) throw badRequest(GoalMessages.tooManyFunnels);
      const funnel = await funnelStore.create(redis, project.id, body, clock.now());
      return c.json(funnel, 201);
    },
  );

  app.delete(
    '/:domain/funnels/:id',
    describeRoute({
      tags: ['Funnels'],
      summary: 'Delete a funnel (owner or admin, write scope)',
      security: bearerSecurity,
      responses: { 200: json('Deleted', OkResult), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    validate('param', IdParam),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const removed = await funnelStore.remove(c.get('services').deps.redis, project.id, c.req.valid('param').id);
      if (!removed) throw new ApiError(404, GoalMessages.funnelNotFound);
      return c.json({ ok: true });
    },
  );

  return app;
}
