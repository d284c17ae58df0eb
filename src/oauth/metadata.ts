import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { json } from '../http/openapi-helpers.js';
import { mcpResource, publicBase } from './base-url.js';
import { AuthorizationServerMetadata, ProtectedResourceMetadata, SCOPES } from './schemas.js';

const protectedResource = (c: Context<AppEnv>) =>
  c.json({
    resource: mcpResource(c),
    authorization_servers: [publicBase(c)],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Sightline MCP',
  });

const resourceDoc = (where: string) =>
  describeRoute({
    tags: ['OAuth'],
    summary: `Protected-resource metadata of the MCP endpoint (RFC 9728), ${where}`,
    responses: { 200: json('Metadata', ProtectedResourceMetadata) },
  });

/** `/.well-known/*`: discovery documents for MCP clients (RFC 9728, RFC 8414). Public, CORS `*`. */
export function wellKnownRoutes() {
  const app = new Hono<AppEnv>();
  app.use('*', cors({ origin: '*', allowMethods: ['GET'] }));
  app.get('/oauth-protected-resource/mcp', resourceDoc('at the path of the resource'), protectedResource);
  app.get('/oauth-protected-resource', resourceDoc('root form'), protectedResource);
  app.get(
    '/oauth-authorization-server',
    describeRoute({
      tags: ['OAuth'],
      summary: 'Authorization server metadata (RFC 8414)',
      responses: { 200: json('Metadata', AuthorizationServerMetadata) },
    }),
    (c) => {
      const base = publicBase(c);
      return c.json({
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        registration_endpoint: `${base}/oauth/register`,
        revocation_endpoint: `${base}/oauth/revoke`,
        scopes_supported: [...SCOPES],
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        revocation_endpoint_auth_methods_supported: ['none'],
        authorization_response_iss_parameter_supported: true,
      });
    },
  );
  return app;
}
