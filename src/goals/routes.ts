import { Hono } from 'hono';
import type { AppEnv } from '../deps.js';

/** Goal and funnel management under /api/v1/projects/:domain. */
export function goalRoutes() {
  const app = new Hono<AppEnv>();
  return app;
}
