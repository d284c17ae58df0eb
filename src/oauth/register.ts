import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import type { AppEnv } from '../deps.js';
import { errorsFor, json } from '../http/openapi-helpers.js';
import { byClientIp, rateLimit } from '../ratelimit.js';
import { oauthValidate } from './errors.js';
import { OAuthErrorBody, RegisterBody, RegisteredClient } from './schemas.js';
import { registerClient } from './store.js';

/**
 * `/oauth/register`: dynamic client registration (RFC 7591) for public clients. Every client
 * is registered for the code flow with PKCE and no secret, whatever it asked for
 * (RFC 7591 §3.2.1 lets the server replace requested metadata; the answer says what holds).
 */
export function registerRoutes() {
  const app = new Hono<AppEnv>();
  app.post(
    '/register',
    describeRoute({
      tags: ['OAuth'],
      summary: 'Register an OAuth client (RFC 7591)',
      responses: { 201: json('The registered client', RegisteredClient), 400: json('invalid_redirect_uri or invalid_client_metadata', OAuthErrorBody), ...errorsFor(429) },
    }),
    // Anyone may register a client: a per-address limit keeps that from filling Redis.
    rateLimit('auth', byClientIp),
    oauthValidate('json', RegisterBody, 'invalid_client_metadata'),
    async (c) => {
      const body = c.req.valid('json') as v.InferOutput<typeof RegisterBody>;
      const { redis, clock } = c.get('services').deps;
      const now = clock.now();
      const client = await registerClient(redis, { clientName: body.client_name || 'MCP client', redirectUris: body.redirect_uris }, now);
      c.header('Cache-Control', 'no-store');
      return c.json(
        {
          client_id: client.clientId,
          client_id_issued_at: Math.floor(now / 1000),
          client_name: client.clientName,
          redirect_uris: client.redirectUris,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none' as const,
          scope: 'read write',
        },
        201,
      );
    },
  );
  return app;
}
