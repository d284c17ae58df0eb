import { Hono, type Context } from 'hono';
import { describeRoute, resolver } from 'hono-openapi';
import { HTTPException } from 'hono/http-exception';
import { StreamableHTTPTransport } from '@hono/mcp';
import type { AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { errorsFor, json } from '../http/openapi-helpers.js';
import { byCredential, rateLimit } from '../ratelimit.js';
import { challenge, mcpAuth } from './auth.js';
import type { AppFetch } from './dispatch.js';
import { JsonRpcBody, JsonRpcResponse } from './schemas.js';
import { buildServer } from './server.js';
import { buildTools, type ToolSpec } from './tools.js';

/** True when the batch calls a tool that needs write scope. */
function callsWriteTool(body: unknown, tools: readonly ToolSpec[]): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const msg = m as { method?: unknown; params?: { name?: unknown } } | null;
    return msg?.method === 'tools/call' && tools.some((t) => t.write && t.name === msg.params?.name);
  });
}

/** Plain JSON unless the client accepts only an event stream. */
function wantsSse(c: Context<AppEnv>): boolean {
  const accept = c.req.header('Accept') ?? '';
  return accept.includes('text/event-stream') && !accept.includes('application/json') && !accept.includes('*/*');
}

const methodNotAllowed = (c: Context<AppEnv>) => {
  c.header('Allow', 'POST');
  return c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this endpoint is stateless, use POST' }, id: null }, 405);
};

/**
 * `/mcp`: the agent endpoint. Streamable HTTP, stateless: every POST gets a
 * fresh MCP server and transport; report and analysis tools call their routes' functions directly,
 * the other tools are the REST routes, run in-process by `fetchApp`.
 */
export function mcpRoutes(fetchApp: AppFetch) {
  const app = new Hono<AppEnv>();
  const tools = buildTools();

  app.post(
    '/mcp',
    describeRoute({
      tags: ['MCP'],
      summary: 'MCP endpoint (Streamable HTTP, JSON-RPC 2.0; protocol versions 2025-06-18 and 2025-11-25)',
      description:
        'Methods: initialize, tools/list, tools/call, ping. Tools: list_projects, get_project, report_{name} for every report, ' +
        'breakdown, query, realtime, export_csv, and for write credentials create_project, update_project, create_goal, delete_goal. Tool failures are ' +
        'results with isError true and the REST message. Answers are JSON, or an event stream when Accept names only ' +
        'text/event-stream. Authenticate with an API key or an OAuth access token for this resource; a 401 carries ' +
        '`WWW-Authenticate: Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"`.',
      security: [{ bearerApiKey: [] }, { oauth2: ['read'] }],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: resolver(JsonRpcBody),
            example: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'report_stats', arguments: { domain: 'example.com', period: '7d' } } },
          },
        },
      } as never,
      responses: {
        200: json('JSON-RPC response', JsonRpcResponse),
        202: { description: 'Accepted (the message carried only notifications)' },
        ...errorsFor(401, 403, 429),
      },
    }),
    mcpAuth(),
    rateLimit('api', byCredential),
    async (c) => {
      const auth = c.get('auth');
      let body: unknown;
      try {
        body = await c.req.json();
      } catch {
        return c.json({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body must be JSON' }, id: null }, 400);
      }
      // An OAuth token may be stepped up to write scope by the client: say so (RFC 6750 §3.1).
      if (auth.via === 'oauth' && auth.scope !== 'write' && callsWriteTool(body, tools)) {
        throw new ApiError(403, 'This tool needs the write scope', {
          'WWW-Authenticate': challenge(c, { code: 'insufficient_scope', description: 'This tool needs the write scope', scope: 'read write' }),
        });
      }
      const sse = wantsSse(c);
      const server = buildServer(tools, auth, fetchApp, new URL(c.req.url).origin, c.get('services').deps);
      const transport = new StreamableHTTPTransport({ sessionIdGenerator: undefined, enableJsonResponse: !sse });
      await server.connect(transport);
      try {
        const res = await transport.handleRequest(c, body);
        return res ?? c.body(null, 202);
      } catch (err) {
        // The transport's refusals (406, 415, bad JSON-RPC) carry their JSON-RPC body.
        if (err instanceof HTTPException) return err.getResponse();
        throw err;
      } finally {
        if (!sse) await server.close();
      }
    },
  );
  const notAllowedDoc = (method: string) =>
    describeRoute({
      tags: ['MCP'],
      summary: `${method} is not supported: the MCP endpoint is stateless (no SSE stream to resume, no session to end)`,
      responses: { 405: json('Method not allowed', JsonRpcResponse) },
    });
  app.get('/mcp', notAllowedDoc('GET'), methodNotAllowed);
  app.delete('/mcp', notAllowedDoc('DELETE'), methodNotAllowed);
  return app;
}
