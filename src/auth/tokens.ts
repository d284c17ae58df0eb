/**
 * Credential formats. API keys: `sl_` + 22 base62 chars (≥128 bits) + 6-char base62 CRC32
 * checksum. Session tokens: `sls_` + the same body; OAuth access tokens `slo_`, refresh tokens
 * `slr_`, authorization codes `slc_`. The checksum lets a garbled or made-up credential be
 * refused without a Redis lookup.
 */
import { randomBase62 } from '../ids.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LEN = 22;
const SUM_LEN = 6;

export type TokenKind = 'key' | 'session' | 'oauth' | 'refresh' | 'code';
const PREFIX: Record<TokenKind, string> = { key: 'sl_', session: 'sls_', oauth: 'slo_', refresh: 'slr_', code: 'slc_' };
const KIND_BY_PREFIX = new Map(Object.entries(PREFIX).map(([kind, prefix]) => [prefix, kind as TokenKind]));

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(text: string): number {
  let c = 0xffffffff;
  for (const byte of new TextEncoder().encode(text)) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function checksum(body: string): string {
  let n = crc32(body);
  let s = '';
  for (let i = 0; i < SUM_LEN; i++) {
    s = BASE62[n % 62] + s;
    n = Math.floor(n / 62);
  }
  return s;
}

/** A new random credential of the given kind. */
export function generateToken(kind: TokenKind): string {
  const body = randomBase62(BODY_LEN);
  return PREFIX[kind] + body + checksum(body);
}

const SHAPE = new RegExp(`^(sl[socr]?_)([0-9A-Za-z]{${BODY_LEN}})([0-9A-Za-z]{${SUM_LEN}})$`);

/** The kind of a well-formed credential with a valid checksum, else null. No I/O. */
export function parseToken(token: string): TokenKind | null {
  const m = SHAPE.exec(token);
  if (!m || checksum(m[2]) !== m[3]) return null;
  return KIND_BY_PREFIX.get(m[1]) ?? null;
}

/** SHA-256 hex digest: the only form in which credentials are stored. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Compares two equal-length hex digests without an early exit. */
export function timingSafeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
