import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../scripts/admin.js';
import { createApp } from '../../src/app.js';
import { DEFAULT_PASSWORD_ITERATIONS, hashIterations } from '../../src/auth/password.js';
import { createAccount, getAccount } from '../../src/auth/store.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';

/**
 * Password sign-in at production settings: the harness hashes test accounts with fewer
 * iterations, so this file builds an app with `passwordIterations` unset (the default).
 */
let h: Harness;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  h = await createHarness();
  app = createApp({ ...h.deps, passwordIterations: undefined });
});
afterAll(closeHarness);

const login = async (email: string, password: string): Promise<Response> =>
  app.request('/api/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password }) });
const newEmail = (label: string) => `${unique(label)}@test.example`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(run: () => Promise<Response>, status: number): Promise<number> {
  const start = performance.now();
  const res = await run();
  const ms = performance.now() - start;
  expect(res.status).toBe(status);
  return ms;
}

describe('password hashing at the default count', () => {
  it('is 600,000 iterations for new accounts (account:create)', async () => {
    expect(DEFAULT_PASSWORD_ITERATIONS).toBe(600_000);
    const email = newEmail('fresh');
    const created = (await runAdmin(h.deps.redis, ['account:create', '--email', email, '--password', 'fresh password'])) as { id: string };
    expect(hashIterations((await getAccount(h.deps.redis, created.id))!.passwordHash!)).toBe(600_000);
  });

  it('upgrades a 120,000-iteration hash to the default on the next successful login, read back from Redis', async () => {
    const email = newEmail('legacy');
    const account = await createAccount(h.deps.redis, { email, password: 'legacy password' }, Date.now(), { passwordIterations: 120_000 });
    expect(hashIterations(account.passwordHash!)).toBe(120_000);
    // A failed sign-in changes nothing.
    expect((await login(email, 'not it')).status).toBe(401);
    expect((await getAccount(h.deps.redis, account.id))!.passwordHash).toBe(account.passwordHash);

    expect((await login(email, 'legacy password')).status).toBe(200);
    const stored = (await getAccount(h.deps.redis, account.id))!.passwordHash!;
    expect(stored).not.toBe(account.passwordHash);
    expect(hashIterations(stored)).toBe(DEFAULT_PASSWORD_ITERATIONS);
    expect((await login(email, 'legacy password')).status).toBe(200);
    expect((await login(email, 'not it')).status).toBe(401);
  });
});

describe('POST /api/auth/login takes as long for an unknown email', () => {
  it('medians of unknown email, wrong password and wrong password on an old hash agree within a factor of 2', async () => {
    const email = newEmail('timed');
    await createAccount(h.deps.redis, { email, password: 'timed password' }, Date.now());
    const oldEmail = newEmail('timed-old');
    await createAccount(h.deps.redis, { email: oldEmail, password: 'timed password' }, Date.now(), { passwordIterations: 120_000 });
    const known: number[] = [];
    const unknown: number[] = [];
    const old: number[] = [];
    await login(email, 'warm up'); // first PBKDF2 call pays for setup
    for (let i = 0; i < 5; i++) {
      known.push(await timed(() => login(email, 'wrong password'), 401));
      unknown.push(await timed(() => login(newEmail('ghost'), 'wrong password'), 401));
      old.push(await timed(() => login(oldEmail, 'wrong password'), 401));
    }
    const [k, u, o] = [median(known), median(unknown), median(old)];
    const detail = `known ${k.toFixed(0)} ms, unknown ${u.toFixed(0)} ms, old hash ${o.toFixed(0)} ms`;
    // Without the stand-in hash an unknown email answers in about a millisecond against hundreds.
    expect(u / k, detail).toBeGreaterThan(0.5);
    expect(u / k, detail).toBeLessThan(2);
    expect(o / k, detail).toBeGreaterThan(0.5);
    expect(o / k, detail).toBeLessThan(2);
  }, 120_000);
});
