/**
 * Password hashes: `pbkdf2-sha256$iterations$salt$hash`, WebCrypto only so it runs on Workers too.
 * The iteration count travels in the hash, so hashes made with an older count still verify and
 * are replaced at the current count on the next successful sign-in (`checkSignIn`).
 */

/** OWASP's 2023 figure for PBKDF2-HMAC-SHA256. Tests may hash with fewer (Deps.passwordIterations). */
export const DEFAULT_PASSWORD_ITERATIONS = 600_000;
/** A stored hash asking for more than this is refused unread: a forged record must not cost minutes of CPU. */
const MAX_ITERATIONS = 10_000_000;
const SCHEME = 'pbkdf2-sha256';

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (s: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/** The salt of the stand-in hash computed when there is no account: fixed, it is never stored. */
const DUMMY_SALT = new Uint8Array(16).fill(0x5a);

async function derive(password: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, 256);
  return new Uint8Array(bits);
}

interface ParsedHash {
  iterations: number;
  salt: Uint8Array<ArrayBuffer>;
  hash: Uint8Array;
}

function parseHash(stored: string | null | undefined): ParsedHash | null {
  if (!stored) return null;
  const [scheme, iter, salt, hash, extra] = stored.split('$');
  if (scheme !== SCHEME || !iter || !salt || !hash || extra !== undefined || !/^\d{1,8}$/.test(iter)) return null;
  const iterations = Number(iter);
  if (iterations < 1 || iterations > MAX_ITERATIONS) return null;
  try {
    return { iterations, salt: unb64(salt), hash: unb64(hash) };
  } catch {
    return null;
  }
}

/** Constant-time equality of two digests (every byte is compared whatever the first difference). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

export async function hashPassword(password: string, iterations = DEFAULT_PASSWORD_ITERATIONS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return `${SCHEME}$${iterations}$${b64(salt)}$${b64(await derive(password, salt, iterations))}`;
}

/** The iteration count a stored hash was made with, or null when it is not one of ours. */
export function hashIterations(stored: string): number | null {
  return parseHash(stored)?.iterations ?? null;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  return sameBytes(await derive(password, parsed.salt, parsed.iterations), parsed.hash);
}

export interface SignInCheck {
  ok: boolean;
  /** A fresh hash at `iterations` when the stored one was made with fewer: the caller saves it. */
  rehash: string | null;
}

/**
 * Checks a sign-in so that its time does not tell whether the account exists: without a usable
 * hash (no account, no password) the same PBKDF2 runs on a fixed salt at `iterations`, and a
 * hash made with fewer iterations is padded up to `iterations` before the answer.
 */
export async function checkSignIn(password: string, stored: string | null | undefined, iterations = DEFAULT_PASSWORD_ITERATIONS): Promise<SignInCheck> {
  const parsed = parseHash(stored);
  if (!parsed) {
    await derive(password, DUMMY_SALT, iterations);
    return { ok: false, rehash: null };
  }
  const ok = sameBytes(await derive(password, parsed.salt, parsed.iterations), parsed.hash);
  const short = iterations - parsed.iterations;
  if (short > 0) {
    if (!ok) await derive(password, DUMMY_SALT, short);
    else return { ok, rehash: await hashPassword(password, iterations) };
  }
  return { ok, rehash: null };
}
