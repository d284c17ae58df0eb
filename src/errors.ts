import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { logError } from './log.js';

/** The one error type of the API: a status, a message for `{ error }`, optional headers. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Messages fixed by the contract (§7). */
export const Messages = {
  unauthorized: 'Invalid or missing API key',
  readOnly: 'API key is read-only',
  projectNotFound: 'Project not found',
  tooManyRequests: 'Too many requests',
  nameDomainRequired: 'name and domain are required',
  alreadyHaveDomain: 'You already have a project for this domain',
  confirmRequired: 'Pass `confirm` true',
  noValidFields: 'No valid fields to update',
  unavailable: 'Service temporarily unavailable',
  notFound: 'Not found',
} as const;

export const unauthorized = () => new ApiError(401, Messages.unauthorized);
export const readOnly = () => new ApiError(403, Messages.readOnly);
export const projectNotFound = () => new ApiError(404, Messages.projectNotFound);
export const badRequest = (message: string) => new ApiError(400, message);

/** Raised by the Redis adapter when the server cannot be reached in time. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/**
 * Whether Redis could not be reached (an outage: 503). A reply error is not one: Redis answered,
 * and refused the command (see isStoreReplyError).
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true;
  const e = err as { name?: string; message?: string } | undefined;
  if (!e) return false;
  // Upstash REST over fetch: network failures surface as TypeError("fetch failed") or aborts;
  // a body that is not JSON is a gateway's page, not Redis's answer.
  return (e.name === 'TypeError' && /fetch/i.test(e.message ?? '')) || e.name === 'AbortError' || e.name === 'TimeoutError' || e.name === 'UpstashJSONParseError';
}

/**
 * Whether Redis answered a command with an error (WRONGTYPE, NOSCRIPT, OOM…). Both clients
 * surface it as an UpstashError: the REST API sends `{ error }`, and the RESP adapter answers
 * the same way. It is a fault of ours or of the data, never an outage: a 500, logged.
 */
export function isStoreReplyError(err: unknown): boolean {
  return (err as { name?: string } | undefined)?.name === 'UpstashError';
}

/**
 * The reply error's text without the command the REST client appends (`…, command was: [...]`):
 * its arguments may hold record values that have no place in a log.
 */
export function storeReplyText(err: unknown): string {
  return String((err as Error).message ?? err).split(', command was: ')[0]!;
}

/** What an error answers: status, extra headers and the `{ error }` body. */
export interface ErrorPayload {
  status: ContentfulStatusCode;
  headers: Record<string, string>;
  body: { error: string };
}

/**
 * The answer to anything thrown in a handler, runtime-neutral, so a route served outside Hono
 * (the Node event fast path) refuses exactly as the app does. Unexpected errors are logged here.
 */
export function errorPayload(err: unknown): ErrorPayload {
  if (err instanceof ApiError) return { status: err.status, headers: err.headers, body: { error: err.message } };
  if (err instanceof HTTPException && err.status < 500) {
    // Hono's own refusals (malformed JSON, body limit) keep their status, in our body shape.
    return { status: err.status, headers: {}, body: { error: err.message || 'Bad request' } };
  }
  if (isStoreUnavailable(err)) return { status: 503, headers: { 'Retry-After': '5' }, body: { error: Messages.unavailable } };
  if (isStoreReplyError(err)) logError(`[sightline] Redis refused a command: ${storeReplyText(err)}`);
  else logError('[sightline] unhandled error', err);
  return { status: 500, headers: {}, body: { error: 'Internal server error' } };
}

/** Turns anything thrown in a handler into the `{ error }` body with the right status. */
export function errorResponse(c: Context, err: unknown): Response {
  const { status, headers, body } = errorPayload(err);
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  return c.json(body, status);
}
