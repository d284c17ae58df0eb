import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { loadProject } from '../projects/access.js';
import { addItemRoutes } from './item-routes.js';
import { CreateFunnelBody, CreateGoalBody, FunnelList, FunnelSchema, GoalSchema } from './schemas.js';
import { funnelStore, GoalMessages, goalStore, MAX_FUNNELS, MAX_GOALS } from './store.js';

/** Goal and funnel management under /api/v1/projects/:domain. Reading goals and funnel results are reports. */
export function goalRoutes() {
  const app = new Hono<AppEnv>();

  addItemRoutes(app, {
    segment: 'goals',
    tag: 'Goals',
    noun: 'goal',
    createDescription:
      'Types: `event` (value = custom or transaction event name), `pageview` (value = path pattern, `*` matches any ' +
      'characters including `/`), `revenue` (value = transaction name), `traffic` (value = referrer source, `""` for all ' +
      'traffic), `engagement` (value `""`: average visit duration). `target` is an optional number ≥ 0.',
    body: CreateGoalBody,
    schema: GoalSchema,
    store: goalStore,
    max: MAX_GOALS,
    tooManyMessage: GoalMessages.tooManyGoals,
    notFoundMessage: GoalMessages.goalNotFound,
  });

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

  addItemRoutes(app, {
    segment: 'funnels',
    tag: 'Funnels',
    noun: 'funnel',
    createDescription:
      '2 to 8 steps, each `{type: "pageview", value: path pattern with * wildcards}` or `{type: "event", value: event name}`.',
    body: CreateFunnelBody,
    schema: FunnelSchema,
    store: funnelStore,
    max: MAX_FUNNELS,
    tooManyMessage: GoalMessages.tooManyFunnels,
    notFoundMessage: GoalMessages.funnelNotFound,
  });

  return app;
}
