import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkSignIn, DEFAULT_PASSWORD_ITERATIONS, hashIterations, hashPassword, verifyPassword } from '../../src/auth/password.js';

/** The PBKDF2 parameters of every deriveBits call made while `run` runs. */
async function derivations(run: () => Promise<unknown>): Promise<{ name: string; hash: string; iterations: number; saltBytes: number; length: number }[]> {
  const spy = vi.spyOn(crypto.subtle, 'deriveBits');
  try {
    await run();
    return spy.mock.calls.map(([params, , length]) => {
      const p = params as Pbkdf2Params;
      return { name: p.name, hash: String(p.hash), iterations: p.iterations, saltBytes: (p.salt as Uint8Array).byteLength, length: Number(length) };
    });
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('password hashes', () => {
  it('default to PBKDF2-SHA256 at 600,000 iterations, stored in the hash', async () => {
    expect(DEFAULT_PASSWORD_ITERATIONS).toBe(600_000);
    const stored = await hashPassword('correct horse');
    expect(stored).toMatch(/^pbkdf2-sha256\$600000\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(hashIterations(stored)).toBe(600_000);
    expect(await verifyPassword('correct horse', stored)).toBe(true);
  });

  it('verify hashes made with another count (the old 120,000) and refuse malformed or absurd ones', async () => {
    const old = await hashPassword('old secret', 120_000);
    expect(hashIterations(old)).toBe(120_000);
    expect(await verifyPassword('old secret', old)).toBe(true);
    expect(await verifyPassword('old secreT', old)).toBe(false);
    const [, , salt, hash] = old.split('$');
    // A forged record asking for a billion iterations is refused without deriving anything.
    expect(await derivations(() => verifyPassword('old secret', `pbkdf2-sha256$1000000000$${salt}$${hash}`))).toEqual([]);
    for (const bad of ['md5$1$x$y', 'pbkdf2-sha256$abc$x$y', `pbkdf2-sha256$0$${salt}$${hash}`, `${old}$extra`, 'pbkdf2-sha256$1000$!!$!!']) {
      expect(await verifyPassword('old secret', bad), bad).toBe(false);
    }
  });
});

describe('checkSignIn', () => {
  const ITER = 20_000;

  it('without an account runs the same PBKDF2 (hash, length, salt size, iterations) as a wrong password', async () => {
    const stored = await hashPassword('the password', ITER);
    const known = await derivations(() => checkSignIn('a guess', stored, ITER));
    const unknown = await derivations(() => checkSignIn('a guess', null, ITER));
    const noPassword = await derivations(() => checkSignIn('a guess', undefined, ITER));
    const expected = [{ name: 'PBKDF2', hash: 'SHA-256', iterations: ITER, saltBytes: 16, length: 256 }];
    expect(known).toEqual(expected);
    expect(unknown).toEqual(expected);
    expect(noPassword).toEqual(expected);
    expect(await checkSignIn('a guess', null, ITER)).toEqual({ ok: false, rehash: null });
  });

  it('pads a wrong password on an older, cheaper hash up to the current count', async () => {
    const old = await hashPassword('the password', ITER / 4);
    const calls = await derivations(() => checkSignIn('a guess', old, ITER));
    expect(calls.reduce((sum, c) => sum + c.iterations, 0)).toBe(ITER);
    expect(await checkSignIn('a guess', old, ITER)).toEqual({ ok: false, rehash: null });
  });

  it('on success with an older hash returns a rehash at the current count; never downgrades', async () => {
    const old = await hashPassword('the password', ITER / 4);
    const result = await checkSignIn('the password', old, ITER);
    expect(result.ok).toBe(true);
    expect(hashIterations(result.rehash!)).toBe(ITER);
    expect(await verifyPassword('the password', result.rehash!)).toBe(true);
    const stronger = await hashPassword('the password', ITER * 2);
    expect(await checkSignIn('the password', stronger, ITER)).toEqual({ ok: true, rehash: null });
  });
});
