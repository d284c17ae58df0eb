import { Hono } from 'hono';
import type { AppEnv } from '../deps.js';

/** Report routes under /api/v1/projects/:domain, generated from the report registry. */
export function reportRoutes() {
  const app = new Hono<AppEnv>();
  return app;
}
