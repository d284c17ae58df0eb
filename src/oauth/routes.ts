import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { AppEnv } from '../deps.js';
import { authorizeRoutes } from './authorize.js';
import { oauthErrorResponse } from './errors.js';
import { registerRoutes } from './register.js';
import { tokenRoutes } from './token.js';

/**
 * `/oauth/*`: the authorization server of the MCP endpoint. Registration, token and
 * revocation are called by clients (browser-based ones too: CORS `*`, no cookies there);
 * authorize is a page for the user's browser.
 */
export function oauthRoutes() {
  const app = new Hono<AppEnv>();
  app.onError(oauthErrorResponse);
  const api = cors({ origin: '*', allowMethods: ['POST'], allowHeaders: ['Content-Type'] });
  app.use('/register', api);
  app.use('/token', api);
  app.use('/revoke', api);
  app.route('/', registerRoutes());
  app.route('/', tokenRoutes());
  app.route('/', authorizeRoutes());
  return app;
}
