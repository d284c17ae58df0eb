import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.js';
import { routePattern } from './route-pattern.js';

/** Largest JSON or form body of a route that names no other limit. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

/** A route's own body limit: bytes, or `'stream'` for a route that reads its body piece by piece under limits of its own. */
export interface BodyLimitRule {
  method: string;
  /** Hono-style path, `:param` for one segment (`/api/v1/projects/:domain/hits`). */
  path: string;
  limit: number | 'stream';
}

/** Methods whose requests carry no body to limit (servers do not read one). */
const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS']);

const inUnits = (bytes: number) =>
  bytes % (1024 * 1024) === 0 ? ` (${bytes / 1024 / 1024} MB)` : bytes % 1024 === 0 ? ` (${bytes / 1024} KB)` : '';

/** The 413: names the limit, and asks to close the connection so the rest of the upload is not read. */
export const bodyTooLarge = (limit: number) =>
  new ApiError(413, `Body must be at most ${limit} bytes${inUnits(limit)}`, { Connection: 'close' });

/** The limit for a request: the first matching rule's, else the default (null: no body is read). */
export function bodyLimitLookup(rules: readonly BodyLimitRule[], fallback = DEFAULT_BODY_LIMIT) {
  const compiled = rules.map((r) => ({ method: r.method.toUpperCase(), re: routePattern(r.path), limit: r.limit }));
  return (method: string, path: string): number | 'stream' | null => {
    const m = method.toUpperCase();
    if (BODILESS.has(m)) return null;
    return compiled.find((r) => r.method === m && r.re.test(path))?.limit ?? fallback;
  };
}

/**
 * One body limit in front of every route, so none can be forgotten: the default, or the route's
 * own rule. A declared Content-Length over the limit is refused before a byte is read; a body
 * without one (chunked) is counted as it streams and refused as soon as it passes the limit
 * (hono/body-limit), never held whole. The 413 carries `Connection: close`: Node's server then
 * closes the socket once the answer is out instead of reading the rest of the upload.
 */
export function bodyLimits(rules: readonly BodyLimitRule[], fallback = DEFAULT_BODY_LIMIT): MiddlewareHandler {
  const limitFor = bodyLimitLookup(rules, fallback);
  const limiters = new Map<number, MiddlewareHandler>();
  const limiterOf = (limit: number) => {
    let limiter = limiters.get(limit);
    if (!limiter) {
      limiter = bodyLimit({ maxSize: limit, onError: () => { throw bodyTooLarge(limit); } });
      limiters.set(limit, limiter);
    }
    return limiter;
  };
  return async (c, next) => {
    const limit = limitFor(c.req.method, c.req.path);
    if (limit === null || limit === 'stream') return next();
    // A declared length is checked without touching the body, so @hono/node-server keeps its
    // lazy request (no web stream built) for routes that read the body whole.
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined) {
      if (Number(declared) > limit) throw bodyTooLarge(limit);
      return next();
    }
    return limiterOf(limit)(c, next);
  };
}
