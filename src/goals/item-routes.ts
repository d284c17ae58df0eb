import type { Redis } from '@upstash/redis';
import type { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import { requireWrite } from '../auth/middleware.js';
import type { AppEnv } from '../deps.js';
import { ApiError, badRequest } from '../errors.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { loadProject, MANAGERS, requireProject } from '../projects/access.js';
import { OkResult } from './schemas.js';

const IdParam = v.object({ domain: v.string(), id: v.string() });

/** Write scope first (403), then the manager role (404 like a missing project), then the body. */
const managerOnly = requireProject(MANAGERS);

/** The part of a per-project record store the create and delete routes use. */
interface ItemStore<I, T> {
  create(redis: Redis, projectId: string, input: I, now: number, max: number): Promise<T | null>;
  remove(redis: Redis, projectId: string, id: string): Promise<boolean>;
}

/** One kind of project-owned record (a goal, a funnel) as its two write routes see it. */
export interface ItemKind<S extends v.GenericSchema, T> {
  /** Path segment under `/:domain` and OpenAPI tag, e.g. `goals` / `Goals`. */
  segment: string;
  tag: string;
  /** Singular noun used in summaries: "Create a goal". */
  noun: string;
  createDescription: string;
  body: S;
  /** OpenAPI schema of the created record. */
  schema: v.GenericSchema;
  store: ItemStore<v.InferOutput<S>, T>;
  max: number;
  tooManyMessage: string;
  notFoundMessage: string;
}

/**
 * Adds `POST /:domain/<segment>` (owner or admin, write scope, at most `max` per project) and
 * `DELETE /:domain/<segment>/:id` (404 with the kind's own message when the id is unknown).
 */
export function addItemRoutes<S extends v.GenericSchema, T>(app: Hono<AppEnv>, kind: ItemKind<S, T>): void {
  app.post(
    `/:domain/${kind.segment}`,
    describeRoute({
      tags: [kind.tag],
      summary: `Create a ${kind.noun} (owner or admin, write scope)`,
      description: kind.createDescription,
      security: bearerSecurity,
      responses: { 201: json(`The created ${kind.noun}`, kind.schema), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    managerOnly,
    validate('json', kind.body),
    async (c) => {
      const body = c.req.valid('json');
      const { redis, clock } = c.get('services').deps;
      const { project } = await loadProject(c, MANAGERS);
      const item = await kind.store.create(redis, project.id, body, clock.now(), kind.max);
      if (item === null) throw badRequest(kind.tooManyMessage);
      return c.json(item as object, 201);
    },
  );

  app.delete(
    `/:domain/${kind.segment}/:id`,
    describeRoute({
      tags: [kind.tag],
      summary: `Delete a ${kind.noun} (owner or admin, write scope)`,
      security: bearerSecurity,
      responses: { 200: json('Deleted', OkResult), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    validate('param', IdParam),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      const removed = await kind.store.remove(c.get('services').deps.redis, project.id, c.req.valid('param').id);
      if (!removed) throw new ApiError(404, kind.notFoundMessage);
      return c.json({ ok: true });
    },
  );
}
