import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../auth/context.js';
import { INTERNAL_AUTH } from '../auth/middleware.js';
import { pathParams, type ToolSpec } from './tools.js';

/** The app's own fetch: tools run the REST routes in-process. */
export type AppFetch = (request: Request, env: unknown) => Response | Promise<Response>;

const toolError = (message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: message }] });

/** Arguments → the REST request of the tool; a message when the arguments cannot form one. */
export function toRequest(tool: ToolSpec, args: Record<string, unknown>, origin: string): Request | string {
  const rest: Record<string, unknown> = { ...args };
  let path = tool.path;
  for (const name of pathParams(tool.path)) {
    const value = rest[name];
    delete rest[name];
    if (typeof value !== 'string' || value.trim() === '') return `${name} is required`;
    // `.` and `..` (even percent-encoded) are dot segments to the URL parser: they would name another route.
    if (/^\.{1,2}$/.test(value.trim())) return `${name} is not valid`;
    path = path.replace(`:${name}`, encodeURIComponent(value.trim()));
  }
  const url = new URL(`/api/v1${path}`, origin);
  const init: RequestInit = { method: tool.method, headers: { Accept: 'application/json, text/csv' } };
  if (tool.argsIn === 'query') {
    for (const [key, value] of Object.entries(rest)) {
      if (value === undefined || value === null) continue;
      if (!['string', 'number', 'boolean'].includes(typeof value)) return `${key} must be a string or a number`;
      url.searchParams.set(key, String(value));
    }
  } else if (tool.argsIn === 'body') {
    init.body = JSON.stringify(rest);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  return new Request(url, init);
}

/**
 * Runs a tool as the REST call it stands for, with the caller's verified credential handed in
 * (no second authentication, no second copy of the logic). Any refusal — 400, 403, 404, 429,
 * 503 — comes back as a tool error carrying the REST message.
 */
export async function runTool(fetchApp: AppFetch, auth: AuthContext, tool: ToolSpec, args: Record<string, unknown>, origin: string): Promise<CallToolResult> {
  const request = toRequest(tool, args, origin);
  if (typeof request === 'string') return toolError(request);
  const res = await fetchApp(request, { [INTERNAL_AUTH]: auth });
  const type = res.headers.get('Content-Type') ?? '';
  if (!type.includes('application/json')) {
    const text = await res.text();
    return res.ok ? { content: [{ type: 'text', text }] } : toolError(text || `HTTP ${res.status}`);
  }
  const body = (await res.json()) as unknown;
  if (!res.ok) {
    const message = body && typeof body === 'object' && 'error' in body ? String((body as { error: unknown }).error) : `HTTP ${res.status}`;
    return toolError(message);
  }
  const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(body) }] };
  if (body && typeof body === 'object' && !Array.isArray(body)) result.structuredContent = body as Record<string, unknown>;
  return result;
}
