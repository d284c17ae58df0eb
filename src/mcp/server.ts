import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../auth/context.js';
import type { Deps } from '../deps.js';
import { runTool, type AppFetch } from './dispatch.js';
import type { ToolSpec } from './tools.js';
import { logError } from '../log.js';

export const SERVER_INFO = { name: 'sightline', title: 'Sightline analytics', version: '1.0.0' };

const INSTRUCTIONS =
  'Web analytics of the websites (projects) this credential can access. Start with list_projects to learn the ' +
  'domains, then call report_* tools with a domain and an optional period (24h, today, 7d, 30d, 90d, 6m, 12m, ' +
  'this_month, this_week). breakdown ranks one dimension, query answers metrics by up to three dimensions with filters ' +
  'and comparisons, realtime shows the last minutes. export_csv gives several reports as CSV text.';

/** The tools this caller may see: write tools only for write-scoped credentials. */
export const visibleTools = (tools: readonly ToolSpec[], auth: AuthContext) => tools.filter((t) => !t.write || auth.scope === 'write');

const descriptor = (t: ToolSpec): Tool => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: t.inputSchema,
  annotations: t.annotations,
});

/**
 * A fresh MCP server for one HTTP request (stateless: nothing survives the request). The
 * low-level `Server` takes the JSON Schemas made from the valibot schemas as they are.
 */
export function buildServer(tools: readonly ToolSpec[], auth: AuthContext, fetchApp: AppFetch, origin: string, deps: Deps): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  const mine = visibleTools(tools, auth);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: mine.map(descriptor) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    // Write tools hidden from a read credential still reach REST, which refuses them with its
    // own message (403 'API key is read-only'), so the answer matches the REST API.
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${request.params.name}` }] };
    try {
      const args = request.params.arguments ?? {};
      return tool.call ? await tool.call(deps, auth, args) : await runTool(fetchApp, auth, tool, args, origin);
    } catch (err) {
      logError(`[sightline] mcp tool ${tool.name} failed`, err);
      return { isError: true, content: [{ type: 'text', text: 'Internal error while running the tool' }] };
    }
  });
  return server;
}
