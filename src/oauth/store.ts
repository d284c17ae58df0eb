import type { Redis } from '@upstash/redis';
import type { Scope } from '../auth/context.js';
import { generateToken, parseToken, sha256Hex } from '../auth/tokens.js';
import { isId, newId } from '../ids.js';

/**
 * Redis records of the OAuth authorization server. Codes and tokens appear only as SHA-256
 * digests; every record carries a TTL so nothing outlives its use.
 */
export const OAuthKeys = {
  client: (id: string) => `oauth:client:${id}`,
  code: (hash: string) => `oauth:code:${hash}`,
  /** Marks a code as exchanged; holds the grant it produced, to revoke it on reuse. */
  codeUsed: (hash: string) => `oauth:code-used:${hash}`,
  access: (hash: string) => `oauth:access:${hash}`,
  refresh: (hash: string) => `oauth:refresh:${hash}`,
  refreshUsed: (hash: string) => `oauth:refresh-used:${hash}`,
  /** Set of `access:…`/`refresh:…` digests issued under one authorization (a code and its refreshes). */
  grant: (id: string) => `oauth:grant:${id}`,
  /** Set of grant ids issued to one account, so deleting the account can revoke them all. */
  accountGrants: (accountId: string) => `oauth:account-grants:${accountId}`,
  csrf: (hash: string) => `oauth:csrf:${hash}`,
};

export const CODE_TTL_SECONDS = 60;
export const ACCESS_TTL_SECONDS = 3600;
export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;
/** Unused registrations expire; each token exchange extends the registration. */
export const CLIENT_TTL_SECONDS = 180 * 24 * 3600;
const CSRF_TTL_SECONDS = 900;

export interface OAuthClient {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  createdAt: string;
}

/** What a code or token grants: who, to which client, for which resource, with which scope. */
export interface GrantFields {
  accountId: string;
  clientId: string;
  scope: Scope;
  /** RFC 8707 resource (the audience of the tokens). */
  resource: string;
  grantId: string;
}

export interface CodeRecord extends GrantFields {
  redirectUri: string;
  codeChallenge: string;
  expiresAt: string;
}

export interface TokenRecord extends GrantFields {
  expiresAt: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export async function registerClient(redis: Redis, input: { clientName: string; redirectUris: string[] }, now: number): Promise<OAuthClient> {
  const client: OAuthClient = { clientId: newId('oauthClient'), clientName: input.clientName, redirectUris: input.redirectUris, createdAt: iso(now) };
  await redis.set(OAuthKeys.client(client.clientId), client, { ex: CLIENT_TTL_SECONDS });
  return client;
}

/** The registered client, or null; a client_id not of the format is unknown without a Redis call. */
export async function getClient(redis: Redis, clientId: string): Promise<OAuthClient | null> {
  if (!isId('oauthClient', clientId)) return null;
  return redis.get<OAuthClient>(OAuthKeys.client(clientId));
}

/** Issues a single-use authorization code (60 s). */
export async function createCode(redis: Redis, fields: Omit<CodeRecord, 'expiresAt' | 'grantId'>, now: number): Promise<string> {
  const code = generateToken('code');
  const record: CodeRecord = { ...fields, grantId: newId('oauthGrant'), expiresAt: iso(now + CODE_TTL_SECONDS * 1000) };
  await redis.set(OAuthKeys.code(await sha256Hex(code)), record, { ex: CODE_TTL_SECONDS });
  return code;
}

export type CodeOutcome = { ok: true; record: CodeRecord } | { ok: false; reused: boolean };

/**
 * Takes a code for exchange. The first taker wins (SET NX on the used marker); a second
 * exchange of the same code revokes every token issued from it (RFC 6749 §4.1.2).
 */
export async function consumeCode(redis: Redis, code: string, now: number): Promise<CodeOutcome> {
  // Not a well-formed code: unknown, and never looked up.
  if (parseToken(code) !== 'code') return { ok: false, reused: false };
  const hash = await sha256Hex(code);
  const record = await redis.get<CodeRecord>(OAuthKeys.code(hash));
  const first = record
    ? (await redis.set(OAuthKeys.codeUsed(hash), record.grantId, { nx: true, ex: REFRESH_TTL_SECONDS })) === 'OK'
    : false;
  if (!first) {
    const grantId = await redis.get<string>(OAuthKeys.codeUsed(hash));
    if (grantId) await revokeGrant(redis, String(grantId));
    return { ok: false, reused: !!grantId };
  }
  await redis.del(OAuthKeys.code(hash));
  if (!record || Date.parse(record.expiresAt) <= now) return { ok: false, reused: false };
  return { ok: true, record };
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scope: Scope;
}

/** Mints an access token (1 h) and a refresh token (30 d) under the grant. */
export async function issueTokens(redis: Redis, fields: GrantFields, now: number): Promise<IssuedTokens> {
  const accessToken = generateToken('oauth');
  const refreshToken = generateToken('refresh');
  const [accessHash, refreshHash] = await Promise.all([sha256Hex(accessToken), sha256Hex(refreshToken)]);
  const access: TokenRecord = { ...fields, expiresAt: iso(now + ACCESS_TTL_SECONDS * 1000) };
  const refresh: TokenRecord = { ...fields, expiresAt: iso(now + REFRESH_TTL_SECONDS * 1000) };
  await redis
    .multi()
    .set(OAuthKeys.access(accessHash), access, { ex: ACCESS_TTL_SECONDS })
    .set(OAuthKeys.refresh(refreshHash), refresh, { ex: REFRESH_TTL_SECONDS })
    .sadd(OAuthKeys.grant(fields.grantId), `access:${accessHash}`, `refresh:${refreshHash}`)
    .expire(OAuthKeys.grant(fields.grantId), REFRESH_TTL_SECONDS)
    .sadd(OAuthKeys.accountGrants(fields.accountId), fields.grantId)
    .expire(OAuthKeys.accountGrants(fields.accountId), REFRESH_TTL_SECONDS)
    .expire(OAuthKeys.client(fields.clientId), CLIENT_TTL_SECONDS)
    .exec();
  return { accessToken, refreshToken, expiresIn: ACCESS_TTL_SECONDS, scope: fields.scope };
}

/** The live access token with this digest, or null (unknown, revoked or expired). */
export async function findAccessToken(redis: Redis, hash: string, now: number): Promise<TokenRecord | null> {
  const record = await redis.get<TokenRecord>(OAuthKeys.access(hash));
  return record && Date.parse(record.expiresAt) > now ? record : null;
}

export type RefreshOutcome = { ok: true; record: TokenRecord } | { ok: false };

/**
 * Takes a refresh token for rotation: GETDEL makes it single-use. Presenting an already
 * rotated refresh token again means it leaked: the whole grant is revoked.
 */
export async function consumeRefreshToken(redis: Redis, token: string, now: number): Promise<RefreshOutcome> {
  if (parseToken(token) !== 'refresh') return { ok: false };
  const hash = await sha256Hex(token);
  const record = await redis.getdel<TokenRecord>(OAuthKeys.refresh(hash));
  if (!record) {
    const grantId = await redis.get<string>(OAuthKeys.refreshUsed(hash));
    if (grantId) await revokeGrant(redis, String(grantId));
    return { ok: false };
  }
  await redis.set(OAuthKeys.refreshUsed(hash), record.grantId, { ex: REFRESH_TTL_SECONDS });
  if (Date.parse(record.expiresAt) <= now) return { ok: false };
  return { ok: true, record };
}

/** Deletes every token of a grant. */
export async function revokeGrant(redis: Redis, grantId: string): Promise<void> {
  const members = (await redis.smembers(OAuthKeys.grant(grantId))).map(String);
  const keys = members.map((m) => (m.startsWith('access:') ? OAuthKeys.access(m.slice(7)) : OAuthKeys.refresh(m.slice(8))));
  await redis.del(OAuthKeys.grant(grantId), ...keys);
}

/** Revokes every grant (access and refresh tokens) of an account: it is being deleted. */
export async function revokeAccountGrants(redis: Redis, accountId: string): Promise<number> {
  const grants = (await redis.smembers(OAuthKeys.accountGrants(accountId))).map(String);
  for (const grantId of grants) await revokeGrant(redis, grantId);
  await redis.del(OAuthKeys.accountGrants(accountId));
  return grants.length;
}

/**
 * RFC 7009 revocation of one token (access or refresh) presented by its client. Revoking a
 * refresh token ends the grant; revoking an access token ends only that token. Unknown tokens
 * are not an error.
 */
export async function revokeToken(redis: Redis, token: string, clientId: string): Promise<void> {
  const kind = parseToken(token);
  if (kind !== 'refresh' && kind !== 'oauth') return;
  const hash = await sha256Hex(token);
  const refresh = await redis.get<TokenRecord>(OAuthKeys.refresh(hash));
  if (refresh) {
    if (refresh.clientId === clientId) await revokeGrant(redis, refresh.grantId);
    return;
  }
  const access = await redis.get<TokenRecord>(OAuthKeys.access(hash));
  if (access && access.clientId === clientId) await redis.del(OAuthKeys.access(hash));
}

/** A one-time CSRF token for a consent or login form, bound to the browser's session (or none). */
export async function createCsrf(redis: Redis, binding: string): Promise<string> {
  const token = newId('csrf');
  await redis.set(OAuthKeys.csrf(await sha256Hex(token)), binding, { ex: CSRF_TTL_SECONDS });
  return token;
}

/** True when `token` was issued for `binding`; the token is spent either way. */
export async function consumeCsrf(redis: Redis, token: string, binding: string): Promise<boolean> {
  if (!isId('csrf', token)) return false;
  const stored = await redis.getdel<string>(OAuthKeys.csrf(await sha256Hex(token)));
  return stored !== null && String(stored) === binding;
}
