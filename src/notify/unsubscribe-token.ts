import type { Redis } from '@upstash/redis';
import type { Config } from '../config.js';

/** Redis key of the generated signing key, when UNSUBSCRIBE_SECRET is not configured. */
export const UNSUBSCRIBE_SECRET_KEY = 'notify:unsubscribe-secret';

const enc = new TextEncoder();
const toB64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
function fromB64url(s: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return null;
  try {
    const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * The key that signs unsubscribe links: UNSUBSCRIBE_SECRET when set, else a random key made once
 * and kept in Redis (SET NX, so every process and isolate signs with the same one).
 */
export async function unsubscribeSecret(deps: { config: Config; redis: Redis }): Promise<string> {
  if (deps.config.UNSUBSCRIBE_SECRET) return deps.config.UNSUBSCRIBE_SECRET;
  const existing = await deps.redis.get<string>(UNSUBSCRIBE_SECRET_KEY);
  if (existing) return String(existing);
  const fresh = toB64url(crypto.getRandomValues(new Uint8Array(32)));
  await deps.redis.set(UNSUBSCRIBE_SECRET_KEY, fresh, { nx: true });
  return String(await deps.redis.get<string>(UNSUBSCRIBE_SECRET_KEY));
}

const hmacKey = (secret: string, usage: 'sign' | 'verify') =>
  crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [usage]);

export interface UnsubscribeClaim {
  projectId: string;
  email: string;
}

/** `{payload}.{signature}`: base64url JSON of project and recipient, and its HMAC-SHA256. Never expires (links in old emails keep working). */
export async function signUnsubscribe(secret: string, claim: UnsubscribeClaim): Promise<string> {
  const payload = toB64url(enc.encode(JSON.stringify({ p: claim.projectId, e: claim.email })));
  const signature = new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey(secret, 'sign'), enc.encode(payload)));
  return `${payload}.${toB64url(signature)}`;
}

/** The claim of a token whose signature holds (checked in constant time by WebCrypto), else null. */
export async function verifyUnsubscribe(secret: string, token: string): Promise<UnsubscribeClaim | null> {
  const [payload, sig, extra] = token.split('.');
  if (!payload || !sig || extra !== undefined || token.length > 2000) return null;
  const signature = fromB64url(sig);
  if (!signature) return null;
  if (!(await crypto.subtle.verify('HMAC', await hmacKey(secret, 'verify'), signature, enc.encode(payload)))) return null;
  const bytes = fromB64url(payload);
  try {
    const data = JSON.parse(new TextDecoder().decode(bytes ?? new Uint8Array())) as { p?: unknown; e?: unknown };
    return typeof data.p === 'string' && typeof data.e === 'string' ? { projectId: data.p, email: data.e } : null;
  } catch {
    return null;
  }
}

/** Path of the public unsubscribe page (GET confirms, POST unsubscribes — RFC 8058 one-click). */
export const UNSUBSCRIBE_PATH = '/email-reports/unsubscribe';
export const unsubscribeUrl = (base: string, token: string) => `${base}${UNSUBSCRIBE_PATH}?token=${encodeURIComponent(token)}`;
