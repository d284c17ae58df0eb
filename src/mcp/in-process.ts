import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import type { AuthContext } from '../auth/context.js';
import type { Deps } from '../deps.js';
import { errorPayload } from '../errors.js';

/**
 * A tool that runs in-process: it calls the same function as its REST route with the caller's
 * verified credential, without a request through the app (so a call counts once against the
 * rate limit, at /mcp).
 */
export type InProcessCall = (deps: Deps, auth: AuthContext, args: Record<string, unknown>) => Promise<CallToolResult>;

const toolError = (message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: message }] });

/** A JSON answer as a tool result: text for every client, structured content for those that read it. */
export function jsonResult(body: unknown): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(body) }] };
  if (body && typeof body === 'object' && !Array.isArray(body)) result.structuredContent = body as Record<string, unknown>;
  return result;
}

/**
 * Query-string values as the route would see them: numbers and booleans become text (a tool may
 * pass `limit: 5`), absent values are left out; anything else is refused with the REST wording.
 */
export function asQuery(args: Record<string, unknown>): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    if (!['string', 'number', 'boolean'].includes(typeof value)) return `${key} must be a string or a number`;
    out[key] = String(value);
  }
  return out;
}

/** Validates `input` as the route's validator does: the output, or the first issue's message. */
export function parseArgs<S extends v.GenericSchema>(schema: S, input: unknown): { ok: true; value: v.InferOutput<S> } | { ok: false; error: string } {
  const result = v.safeParse(schema, input);
  return result.success ? { ok: true, value: result.output } : { ok: false, error: result.issues[0]?.message ?? 'Invalid input' };
}

/**
 * Runs `body` and answers as the REST route would: its JSON, or any refusal (400, 404, 429, 503)
 * as a tool error carrying the REST message (unexpected errors are logged by errorPayload).
 */
export async function toolAnswer(body: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return jsonResult(await body());
  } catch (err) {
    return toolError(errorPayload(err).body.error);
  }
}

/** `domain` of the arguments, or the message of a missing one (the REST path could not be formed without it). */
export function domainArg(args: Record<string, unknown>): { ok: true; domain: string; rest: Record<string, unknown> } | { ok: false; error: string } {
  const { domain, ...rest } = args;
  if (typeof domain !== 'string' || domain.trim() === '') return { ok: false, error: 'domain is required' };
  return { ok: true, domain, rest };
}

export { toolError };
