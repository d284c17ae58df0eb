import type { Redis } from '@upstash/redis';
import type { Scope } from './context.js';
import { hashPassword } from './password.js';
import { isEmailKey, isId, newId } from '../ids.js';
import { generateToken, sha256Hex } from './tokens.js';

/** Redis key names for identity records. Credentials appear only as SHA-256 digests. */
export const IdentityKeys = {
  account: (id: string) => `acct:${id}`,
  accountByEmail: (email: string) => `acct:email:${email}`,
  accountKeys: (id: string) => `acct:${id}:keys`,
  accountSessions: (id: string) => `acct:${id}:sessions`,
  apiKey: (hash: string) => `apikey:${hash}`,
  apiKeyById: (id: string) => `apikey:id:${id}`,
  apiKeyUsed: (id: string) => `apikey:used:${id}`,
  session: (hash: string) => `session:${hash}`,
};

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

export interface Account {
  id: string;
  email: string;
  name: string;
  passwordHash: string | null;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  scope: Scope;
  name: string;
  /** `sl_` plus the first characters, and the last four: enough to recognise, not to use. */
  prefix: string;
  last4: string;
  hash: string;
  createdAt: string;
}

export interface SessionRecord {
  accountId: string;
  createdAt: string;
  expiresAt: string;
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The account, or null; an id not of the account format without a Redis call. */
export async function getAccount(redis: Redis, id: string): Promise<Account | null> {
  if (!isId('account', id)) return null;
  return redis.get<Account>(IdentityKeys.account(id));
}

/** The account of an email, or null; what cannot be an email is not looked up. */
export async function findAccountByEmail(redis: Redis, email: string): Promise<Account | null> {
  const key = normalizeEmail(email);
  if (!isEmailKey(key)) return null;
  const id = await redis.get<string>(IdentityKeys.accountByEmail(key));
  return id ? getAccount(redis, String(id)) : null;
}

export class EmailTakenError extends Error {}

/** Creates an account; the email is claimed atomically. */
export async function createAccount(
  redis: Redis,
  input: { email: string; password?: string; name?: string },
  now: number,
  opts: { passwordIterations?: number } = {},
): Promise<Account> {
  const email = normalizeEmail(input.email);
  const account: Account = {
    id: newId('account'),
    email,
    name: input.name ?? '',
    passwordHash: input.password ? await hashPassword(input.password, opts.passwordIterations) : null,
    createdAt: new Date(now).toISOString(),
  };
  const claimed = await redis.set(IdentityKeys.accountByEmail(email), account.id, { nx: true });
  if (claimed !== 'OK') throw new EmailTakenError(`An account with email ${email} already exists`);
  await redis.set(IdentityKeys.account(account.id), account);
  return account;
}

export async function saveAccount(redis: Redis, account: Account): Promise<void> {
  await redis.set(IdentityKeys.account(account.id), account);
}

/** Creates an API key; returns the record and the key text, which is never stored. */
export async function createApiKey(
  redis: Redis,
  input: { accountId: string; scope: Scope; name?: string },
  now: number,
): Promise<{ record: ApiKeyRecord; key: string }> {
  const key = generateToken('key');
  const record: ApiKeyRecord = {
    id: newId('apiKey'),
    accountId: input.accountId,
    scope: input.scope,
    name: input.name ?? '',
    prefix: key.slice(0, 7),
    last4: key.slice(-4),
    hash: await sha256Hex(key),
    createdAt: new Date(now).toISOString(),
  };
  await redis
    .multi()
    .set(IdentityKeys.apiKey(record.hash), record)
    .set(IdentityKeys.apiKeyById(record.id), record.hash)
    .sadd(IdentityKeys.accountKeys(input.accountId), record.id)
    .exec();
  return { record, key };
}

export async function findApiKeyByHash(redis: Redis, hash: string): Promise<ApiKeyRecord | null> {
  return redis.get<ApiKeyRecord>(IdentityKeys.apiKey(hash));
}

export async function listApiKeys(redis: Redis, accountId: string): Promise<(ApiKeyRecord & { lastUsedAt: string | null })[]> {
  const ids = (await redis.smembers(IdentityKeys.accountKeys(accountId))).map(String);
  if (ids.length === 0) return [];
  const hashes = await redis.mget<(string | null)[]>(...ids.map(IdentityKeys.apiKeyById));
  const live = hashes.filter((h): h is string => !!h).map(String);
  if (live.length === 0) return [];
  const records = (await redis.mget<(ApiKeyRecord | null)[]>(...live.map(IdentityKeys.apiKey))).filter(
    (r): r is ApiKeyRecord => !!r,
  );
  if (records.length === 0) return [];
  const used = await redis.mget<(string | null)[]>(...records.map((r) => IdentityKeys.apiKeyUsed(r.id)));
  return records
    .map((r, i) => ({ ...r, lastUsedAt: used[i] ? String(used[i]) : null }))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.id.localeCompare(b.id));
}

/** Deletes a key by id; returns its hash (for cache eviction) or null if it was not found. */
export async function revokeApiKey(redis: Redis, keyId: string, accountId?: string): Promise<string | null> {
  if (!isId('apiKey', keyId)) return null;
  const hash = await redis.get<string>(IdentityKeys.apiKeyById(keyId));
  if (!hash) return null;
  const record = await findApiKeyByHash(redis, String(hash));
  if (accountId && record && record.accountId !== accountId) return null;
  await redis
    .multi()
    .del(IdentityKeys.apiKey(String(hash)), IdentityKeys.apiKeyById(keyId), IdentityKeys.apiKeyUsed(keyId))
    .srem(IdentityKeys.accountKeys(record?.accountId ?? accountId ?? ''), keyId)
    .exec();
  return String(hash);
}

export async function createSession(redis: Redis, accountId: string, now: number): Promise<{ token: string; expiresAt: string }> {
  const token = generateToken('session');
  const hash = await sha256Hex(token);
  const record: SessionRecord = {
    accountId,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + SESSION_TTL_SECONDS * 1000).toISOString(),
  };
  await redis
    .multi()
    .set(IdentityKeys.session(hash), record, { ex: SESSION_TTL_SECONDS })
    .sadd(IdentityKeys.accountSessions(accountId), hash)
    .exec();
  return { token, expiresAt: record.expiresAt };
}

export async function findSession(redis: Redis, hash: string, now: number): Promise<SessionRecord | null> {
  const record = await redis.get<SessionRecord>(IdentityKeys.session(hash));
  if (!record || Date.parse(record.expiresAt) <= now) return null;
  return record;
}

export async function deleteSession(redis: Redis, hash: string): Promise<void> {
  const record = await redis.get<SessionRecord>(IdentityKeys.session(hash));
  await redis.del(IdentityKeys.session(hash));
  if (record) await redis.srem(IdentityKeys.accountSessions(record.accountId), hash);
}

/** Removes the account, its keys and sessions (projects are removed by the caller first). */
export async function deleteAccountIdentity(redis: Redis, account: Account): Promise<string[]> {
  const keyIds = (await redis.smembers(IdentityKeys.accountKeys(account.id))).map(String);
  const keyHashes: string[] = [];
  for (const id of keyIds) {
    const h = await revokeApiKey(redis, id, account.id);
    if (h) keyHashes.push(h);
  }
  const sessions = (await redis.smembers(IdentityKeys.accountSessions(account.id))).map(String);
  await redis.del(
    IdentityKeys.account(account.id),
    IdentityKeys.accountByEmail(account.email),
    IdentityKeys.accountKeys(account.id),
    IdentityKeys.accountSessions(account.id),
    ...sessions.map(IdentityKeys.session),
  );
  return keyHashes;
}

/**
 * Ends every session of the account except `keepHash` (the one that changed the password), so a
 * session opened with the old password does not outlive it. Returns how many ended.
 */
export async function deleteOtherSessions(redis: Redis, accountId: string, keepHash: string | null): Promise<number> {
  const others = (await redis.smembers(IdentityKeys.accountSessions(accountId))).map(String).filter((h) => h !== keepHash);
  if (others.length === 0) return 0;
  await redis
    .multi()
    .del(...others.map(IdentityKeys.session))
    .srem(IdentityKeys.accountSessions(accountId), others[0]!, ...others.slice(1))
    .exec();
  return others.length;
}
