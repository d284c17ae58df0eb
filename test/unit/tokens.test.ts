import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../src/auth/password.js';
import { crc32, generateToken, parseToken, sha256Hex, timingSafeEqualHex } from '../../src/auth/tokens.js';

const BASE62_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Replaces one character of the token with a different base62 character. */
const mutate = (token: string, at: number) => {
  const c = token[at];
  const other = BASE62_CHARS[(BASE62_CHARS.indexOf(c) + 1) % 62];
  return token.slice(0, at) + other + token.slice(at + 1);
};

describe('credential tokens', () => {
  it('API keys are sl_ + 22 base62 + 6 base62 checksum and parse as keys', () => {
    const key = generateToken('key');
    expect(key).toMatch(/^sl_[0-9A-Za-z]{28}$/);
    expect(parseToken(key)).toBe('key');
  });

  it('session tokens are sls_ + the same body and parse as sessions', () => {
    const token = generateToken('session');
    expect(token).toMatch(/^sls_[0-9A-Za-z]{28}$/);
    expect(parseToken(token)).toBe('session');
  });

  it('carries at least 128 bits: 1000 keys are all distinct', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateToken('key')));
    expect(keys.size).toBe(1000);
    // 22 base62 characters = 22 * log2(62) ≈ 131 bits.
    expect(22 * Math.log2(62)).toBeGreaterThanOrEqual(128);
  });

  it('refuses a key with any single character changed (checksum)', () => {
    const key = generateToken('key');
    for (let i = 3; i < key.length; i++) expect(parseToken(mutate(key, i)), `position ${i}`).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['wrong prefix', 'sk_' + 'a'.repeat(28)],
    ['too short', 'sl_abc'],
    ['too long', generateToken('key') + 'x'],
    ['non-base62 character', 'sl_' + 'a'.repeat(21) + '-' + 'a'.repeat(6)],
  ])('refuses %s', (_label, token) => {
    expect(parseToken(token)).toBeNull();
  });

  it('a key body moved under the session prefix still checks, but as a session', () => {
    const key = generateToken('key');
    expect(parseToken('sls_' + key.slice(3))).toBe('session');
  });

  it('crc32 matches the standard check value', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
  });

  it('sha256Hex matches the FIPS 180-2 vector', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('timingSafeEqualHex compares digests exactly', () => {
    expect(timingSafeEqualHex('abcd', 'abcd')).toBe(true);
    expect(timingSafeEqualHex('abcd', 'abce')).toBe(false);
    expect(timingSafeEqualHex('abcd', 'abc')).toBe(false);
  });
});

describe('passwords', () => {
  it('hashes with PBKDF2-SHA256 (≥100k iterations, salted) and verifies', async () => {
    const a = await hashPassword('correct horse');
    const b = await hashPassword('correct horse');
    const [scheme, iterations] = a.split('$');
    expect(scheme).toBe('pbkdf2-sha256');
    expect(Number(iterations)).toBeGreaterThanOrEqual(100_000);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse', a)).toBe(true);
    expect(await verifyPassword('correct horsE', a)).toBe(false);
    expect(await verifyPassword('correct horse', 'md5$1$x$y')).toBe(false);
  });
});
