import { Hono } from 'hono';
import type { AppEnv } from '../deps.js';

/** Server-side hits and NDJSON import under /api/v1/projects/:domain. */
export function ingestApiRoutes() {
  const app = new Hono<AppEnv>();
  return app;
}
