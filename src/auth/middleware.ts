import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../deps.js';
import { readOnly, unauthorized } from '../errors.js';
import type { AuthContext } from './context.js';
import { findApiKeyByHash, findSession, getAccount, IdentityKeys } from './store.js';
import { parseToken, sha256Hex, timingSafeEqualHex } from './tokens.js';
import type { Services } from '../services.js';
import { findAccessToken } from '../oauth/store.js';

/**
 * Env key under which an in-process caller (the MCP endpoint) hands an already verified
 * credential to the REST routes it dispatches to. A symbol: no request from the network and
 * no Workers binding can carry it.
 */
export const INTERNAL_AUTH = Symbol('sightline.internal-auth');

/** The credential handed in by an in-process caller, if any. */
export function internalAuth(env: unknown): AuthContext | undefined {
  return env && typeof env === 'object' ? (env as { [INTERNAL_AUTH]?: AuthContext })[INTERNAL_AUTH] : undefined;
}

function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/**
 * Resolves a Bearer credential to an AuthContext, or null. Malformed or checksum-invalid
 * credentials are refused before any Redis lookup.
 */
export async function resolveCredential(
  services: Services,
  token: string | null,
): Promise<AuthContext | null> {
  if (!token) return null;
  const kind = parseToken(token);
  if (!kind) return null;
  const { redis, clock } = services.deps;
  const now = clock.now();
  const hash = await sha256Hex(token);
  const cached = services.credentialCache.get(hash, now);
  if (cached) return cached;
  let ctx: AuthContext | null = null;
  if (kind === 'key') {
    const record = await findApiKeyByHash(redis, hash);
    if (record && timingSafeEqualHex(record.hash, hash)) {
      ctx = { accountId: record.accountId, via: 'key', scope: record.scope, keyId: record.id };
      // Best effort: a failed write of the last-used time must not fail the request.
      redis.set(IdentityKeys.apiKeyUsed(record.id), new Date(now).toISOString()).catch(() => {});
    }
  } else if (kind === 'oauth') {
    const record = await findAccessToken(redis, hash, now);
    if (record && (await getAccount(redis, record.accountId))) {
      ctx = { accountId: record.accountId, via: 'oauth', scope: record.scope, audience: record.resource };
    }
  } else if (kind === 'session') {
    const session = await findSession(redis, hash, now);
    if (session && (await getAccount(redis, session.accountId))) {
      ctx = { accountId: session.accountId, via: 'session', scope: 'write' };
    }
  }
  if (ctx && kind === 'key') services.credentialCache.set(hash, ctx, now);
  return ctx;
}

/**
 * Requires a valid API key or session. `sessionOnly` refuses API keys (dashboard routes).
 * OAuth access tokens are bound to the MCP resource (RFC 8707), so REST refuses them when
 * they arrive over the network; MCP tools reach REST in-process with INTERNAL_AUTH.
 */
export const authenticate = (opts: { sessionOnly?: boolean } = {}) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const handedIn = internalAuth(c.env);
    const ctx = handedIn ?? (await resolveCredential(c.get('services'), bearer(c.req.header('Authorization'))));
    if (!ctx || (opts.sessionOnly && ctx.via !== 'session') || (!handedIn && ctx.via === 'oauth')) throw unauthorized();
    c.set('auth', ctx);
    await next();
  });

/** Requires write scope: read-only keys get 403. */
export const requireWrite = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (c.get('auth').scope !== 'write') throw readOnly();
    await next();
  });

/** The raw Bearer token of this request (for logout). */
export const bearerToken = (header: string | undefined) => bearer(header);
