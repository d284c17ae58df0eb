import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../deps.js';
import { readOnly, unauthorized } from '../errors.js';
import type { AuthContext } from './context.js';
import { findApiKeyByHash, findSession, getAccount, IdentityKeys } from './store.js';
import { parseToken, sha256Hex } from './tokens.js';
import type { Services } from '../services.js';

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
    if (record && record.hash === hash) {
      ctx = { accountId: record.accountId, via: 'key', scope: record.scope, keyId: record.id };
      // Best effort: a failed write of the last-used time must not fail the request.
      redis.set(IdentityKeys.apiKeyUsed(record.id), new Date(now).toISOString()).catch(() => {});
    }
  } else {
    const session = await findSession(redis, hash, now);
    if (session && (await getAccount(redis, session.accountId))) {
      ctx = { accountId: session.accountId, via: 'session', scope: 'write' };
    }
  }
  if (ctx && kind === 'key') services.credentialCache.set(hash, ctx, now);
  return ctx;
}

/** Requires a valid API key or session. `sessionOnly` refuses API keys (dashboard routes). */
export const authenticate = (opts: { sessionOnly?: boolean } = {}) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const token = bearer(c.req.header('Authorization'));
    const ctx = await resolveCredential(c.get('services'), token);
    if (!ctx || (opts.sessionOnly && ctx.via !== 'session')) throw unauthorized();
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
