import { Hono } from 'hono';
import type { AppEnv } from '../deps.js';

/** Public ingestion: POST /api/event (owned by the ingestion work). */
export function ingestPublicRoutes() {
  const app = new Hono<AppEnv>();
  return app;
}
