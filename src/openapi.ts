import type { Hono } from 'hono';
import { generateSpecs } from 'hono-openapi';
import type { AppEnv } from './deps.js';

/** Base of the generated document: everything not derived from the routes themselves. */
export const documentation = {
  openapi: '3.1.0',
  info: {
    title: 'Sightline API',
    version: '1.0.0',
    description:
      'Privacy-friendly web analytics: projects, reports, goals, funnels, exports and ingestion. ' +
      'Authenticate with `Authorization: Bearer sl_…` (API key) or a session token from `POST /api/auth/login`.',
  },
  components: {
    securitySchemes: {
      bearerApiKey: { type: 'http', scheme: 'bearer', description: 'API key `sl_…` (read or write scope)' },
      session: { type: 'http', scheme: 'bearer', description: 'Session token `sls_…` from POST /api/auth/login' },
      oauth2: {
        type: 'oauth2',
        description: 'OAuth 2.1 access token `slo_…` for the MCP endpoint only (audience `{base}/mcp`); PKCE S256, dynamic client registration at /oauth/register',
        flows: {
          authorizationCode: {
            authorizationUrl: '/oauth/authorize',
            tokenUrl: '/oauth/token',
            refreshUrl: '/oauth/token',
            scopes: { read: 'Read projects and reports', write: 'Create and update projects and goals' },
          },
        },
      },
    },
  },
} as const;

type Operation = { responses?: Record<string, unknown> };
type Document = { paths?: Record<string, Record<string, Operation>> };

/** The body limit of a request (null: no body is read; 'stream': the route limits its own pieces). */
export type BodyLimitOf = (method: string, path: string) => number | 'stream' | null;

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/** Every operation that reads a body under a byte limit lists its 413, naming the limit. */
function withBodyLimits(doc: Document, limitOf: BodyLimitOf): Document {
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(operations)) {
      if (!BODY_METHODS.has(method)) continue;
      const limit = limitOf(method, path.replace(/\{[^}]+\}/g, 'x'));
      if (typeof limit !== 'number') continue;
      op.responses ??= {};
      op.responses['413'] ??= {
        description: `Body larger than ${limit} bytes`,
        content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] } } },
      };
    }
  }
  return doc;
}

/** Builds /openapi.json once per app from the routes' validators and descriptions. */
export function openApiDocument(app: Hono<AppEnv>, bodyLimitOf?: BodyLimitOf): () => Promise<unknown> {
  let cached: Promise<unknown> | null = null;
  return () => {
    cached ??= generateSpecs(app as never, { documentation: documentation as never }).then((doc) =>
      bodyLimitOf ? withBodyLimits(doc as Document, bodyLimitOf) : doc,
    );
    return cached;
  };
}
