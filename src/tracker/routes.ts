import { Hono } from 'hono';
import type { AppEnv } from '../deps.js';

/** GET /script.js. */
export function trackerRoutes() {
  const app = new Hono<AppEnv>();
  return app;
}
