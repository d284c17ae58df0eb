import { Hono } from 'hono';
import type { AppEnv } from '../deps.js';

/** CSV export under /api/v1/projects/:domain/export. */
export function exportRoutes() {
  const app = new Hono<AppEnv>();
  return app;
}
