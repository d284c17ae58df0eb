import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

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

export function isStoreUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true;
  // Upstash REST over fetch: network failures surface as TypeError("fetch failed") or aborts.
  const e = err as { name?: string; message?: string } | undefined;
  return !!e && (e.name === 'TypeError' && /fetch/i.test(e.message ?? '') || e.name === 'AbortError' || e.name === 'TimeoutError');
}

/** Turns anything thrown in a handler into the `{ error }` body with the right status. */
export function errorResponse(c: Context, err: unknown): Response {
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
    return c.json({ error: err.message }, err.status);
  }
  if (err instanceof HTTPException && err.status < 500) {
    // Hono's own refusals (malformed JSON, body limit) keep their status, in our body shape.
    return c.json({ error: err.message || 'Bad request' }, err.status);
  }
  if (isStoreUnavailable(err)) {
    c.header('Retry-After', '5');
    return c.json({ error: Messages.unavailable }, 503);
  }
  console.error('[sightline] unhandled error', err);
  return c.json({ error: 'Internal server error' }, 500);
}
