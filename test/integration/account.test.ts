import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../scripts/admin.js';
import { IdentityKeys } from '../../src/auth/store.js';
import { sha256Hex } from '../../src/auth/tokens.js';
import { ProjectKeys } from '../../src/projects/store.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

/** Sessions, profile, dashboard key management and account deletion (README "Identity and access"). */
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(closeHarness);

const P = '/api/v1/projects';
const UNAUTHORIZED = { error: 'Invalid or missing API key' };
const login = (email: string, password: string) => h.call('POST', '/api/auth/login', { body: { email, password } });

describe('POST /api/auth/login and /logout', () => {
  let u: TestUser;
  beforeAll(async () => {
    u = await h.user('login');
  });

  it('right password → a session token that works on session-only and /api/v1 routes', async () => {
    const res = await login(u.email.toUpperCase(), u.password);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ token: expect.stringMatching(/^sls_[0-9A-Za-z]{28}$/), expiresAt: expect.any(String) });
    expect(Date.parse(body.expiresAt)).toBeGreaterThan(Date.now() + 24 * 3600_000);
    expect((await h.call('GET', '/api/account/profile', { token: body.token })).status).toBe(200);
    expect((await h.call('GET', P, { token: body.token })).status).toBe(200);
  });

  it('bad password or unknown email → 401 with the same message', async () => {
    const wrong = await login(u.email, 'not the password');
    expect(wrong.status).toBe(401);
    const unknown = await login(`nobody-${Date.now()}@test.example`, u.password);
    expect(unknown.status).toBe(401);
    expect(await wrong.json()).toEqual(await unknown.json());
  });

  it('an account created without a password cannot log in', async () => {
    const email = `nopass-${Date.now()}@test.example`;
    await runAdmin(h.deps.redis, ['account:create', '--email', email]);
    expect((await login(email, 'anything at all')).status).toBe(401);
  });

  it.each([
    ['empty body', {}],
    ['no password', { email: 'a@b.co' }],
    ['empty password', { email: 'a@b.co', password: '' }],
  ])('400 when email or password is missing: %s', async (_label, body) => {
    const res = await h.call('POST', '/api/auth/login', { body });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'email and password are required' });
  });

  it('logout ends that session only; it answers 401 afterwards everywhere', async () => {
    const a = (await (await login(u.email, u.password)).json()).token;
    const b = (await (await login(u.email, u.password)).json()).token;
    const out = await h.call('POST', '/api/auth/logout', { token: a });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ ok: true });
    for (const [method, path] of [['GET', '/api/account/profile'], ['GET', P], ['POST', '/api/auth/logout']]) {
      const res = await h.call(method, path, { token: a });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(UNAUTHORIZED);
    }
    expect((await h.call('GET', '/api/account/profile', { token: b })).status).toBe(200);
    expect(await h.deps.redis.exists(IdentityKeys.session(await sha256Hex(a)))).toBe(0);
  });
});

describe('/api/account/profile', () => {
  it('GET shows id, email, name and createdAt', async () => {
    const u = await h.user('prof');
    const res = await h.call('GET', '/api/account/profile', { token: u.session });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: u.accountId, email: u.email, name: '', createdAt: expect.any(String) });
  });

  it('PATCH name needs no password; the change is stored', async () => {
    const u = await h.user('prof');
    const res = await h.call('PATCH', '/api/account/profile', { token: u.session, body: { name: '  Ada Lovelace ' } });
    expect(res.status).toBe(200);
    expect((await res.json()).name).toBe('Ada Lovelace');
    expect((await (await h.call('GET', '/api/account/profile', { token: u.session })).json()).name).toBe('Ada Lovelace');
  });

  it('PATCH email needs the current password; then login works with the new email only', async () => {
    const u = await h.user('prof');
    const newEmail = `New-${u.email}`;
    for (const body of [{ email: newEmail }, { email: newEmail, currentPassword: 'wrong password' }]) {
      const res = await h.call('PATCH', '/api/account/profile', { token: u.session, body });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'currentPassword is wrong or missing' });
    }
    const ok = await h.call('PATCH', '/api/account/profile', { token: u.session, body: { email: newEmail, currentPassword: u.password } });
    expect(ok.status).toBe(200);
    expect((await ok.json()).email).toBe(newEmail.toLowerCase());
    expect((await login(newEmail, u.password)).status).toBe(200);
    expect((await login(u.email, u.password)).status).toBe(401);
    // The old email is free again.
    expect(await runAdmin(h.deps.redis, ['account:create', '--email', u.email])).toMatchObject({ email: u.email });
  });

  it('PATCH email to one in use → 400, nothing changes', async () => {
    const [u, other] = await Promise.all([h.user('prof'), h.user('prof')]);
    const res = await h.call('PATCH', '/api/account/profile', { token: u.session, body: { email: other.email, currentPassword: u.password } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'That email is already in use' });
    expect((await login(u.email, u.password)).status).toBe(200);
    expect((await login(other.email, other.password)).status).toBe(200);
  });

  it('PATCH password needs the current password; the new one works and the old one stops', async () => {
    const u = await h.user('prof');
    const missing = await h.call('PATCH', '/api/account/profile', { token: u.session, body: { password: 'brand new secret' } });
    expect(missing.status).toBe(400);
    const ok = await h.call('PATCH', '/api/account/profile', { token: u.session, body: { password: 'brand new secret', currentPassword: u.password } });
    expect(ok.status).toBe(200);
    expect((await login(u.email, 'brand new secret')).status).toBe(200);
    expect((await login(u.email, u.password)).status).toBe(401);
  });

  it('PATCH password ends every other session of the account and keeps the current one', async () => {
    const u = await h.user('prof');
    const current = ((await (await login(u.email, u.password)).json()) as { token: string }).token;
    const elsewhere = ((await (await login(u.email, u.password)).json()) as { token: string }).token;
    const other = await h.user('prof-other');
    const wrong = await h.call('PATCH', '/api/account/profile', { token: current, body: { password: 'another new secret', currentPassword: 'not it' } });
    expect(wrong.status).toBe(400);
    // A refused change ends nothing.
    expect((await h.call('GET', '/api/account/profile', { token: elsewhere })).status).toBe(200);
    const name = await h.call('PATCH', '/api/account/profile', { token: current, body: { name: 'Still signed in' } });
    expect(name.status).toBe(200);
    expect((await h.call('GET', '/api/account/profile', { token: u.session })).status).toBe(200);

    const ok = await h.call('PATCH', '/api/account/profile', { token: current, body: { password: 'another new secret', currentPassword: u.password } });
    expect(ok.status).toBe(200);
    for (const token of [u.session, elsewhere]) {
      const res = await h.call('GET', '/api/account/profile', { token });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(UNAUTHORIZED);
      expect(await h.deps.redis.exists(IdentityKeys.session(await sha256Hex(token)))).toBe(0);
    }
    expect((await h.call('GET', '/api/account/profile', { token: current })).status).toBe(200);
    expect((await h.deps.redis.smembers(IdentityKeys.accountSessions(u.accountId))).map(String)).toEqual([await sha256Hex(current)]);
    // API keys are not sessions: they keep working. Another account's session is untouched.
    expect((await h.call('GET', P, { token: u.readKey })).status).toBe(200);
    expect((await h.call('GET', '/api/account/profile', { token: other.session })).status).toBe(200);
    // A session started after the change works as usual.
    const fresh = ((await (await login(u.email, 'another new secret')).json()) as { token: string }).token;
    expect((await h.call('GET', '/api/account/profile', { token: fresh })).status).toBe(200);
  });

  it.each([
    ['empty body', {}, 'No valid fields to update'],
    ['unknown field', { nickname: 'x' }, 'Unknown field: profile accepts name, email, password and currentPassword'],
    ['short password', { password: 'short', currentPassword: 'x' }, 'password must be at least 8 characters'],
    ['invalid email', { email: 'not-an-email', currentPassword: 'x' }, 'email must be a valid address'],
    ['name too long', { name: 'n'.repeat(81) }, 'name must be at most 80 characters'],
  ])('PATCH 400: %s', async (_label, body, error) => {
    const u = await h.user('prof');
    const res = await h.call('PATCH', '/api/account/profile', { token: u.session, body });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error });
  });
});

describe('/api/account/keys', () => {
  it('lists keys with prefix, last4, createdAt and lastUsedAt, never the key or its hash', async () => {
    const u = await h.user('keys');
    await h.call('GET', P, { token: u.readKey }); // marks the read key as used
    const res = await h.call('GET', '/api/account/keys', { token: u.session });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(u.readKey);
    expect(text).not.toContain(u.writeKey);
    expect(text).not.toContain(await sha256Hex(u.readKey));
    const { keys } = JSON.parse(text);
    expect(keys).toHaveLength(2);
    const read = keys.find((k: { scope: string }) => k.scope === 'read');
    const write = keys.find((k: { scope: string }) => k.scope === 'write');
    expect(Object.keys(read).sort()).toEqual(['createdAt', 'id', 'last4', 'lastUsedAt', 'name', 'prefix', 'scope']);
    expect(read).toMatchObject({ name: 'r', prefix: u.readKey.slice(0, 7), last4: u.readKey.slice(-4) });
    expect(Date.parse(read.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(write.lastUsedAt).toBeNull();
  });

  it('creates a key shown once (201); it works with its scope; the list shows it without the key', async () => {
    const u = await h.user('keys');
    const res = await h.call('POST', '/api/account/keys', { token: u.session, body: { scope: 'write', name: 'CI deploy' } });
    expect(res.status).toBe(201);
    const created = await res.json();
    expect(created).toEqual({
      id: expect.any(String), name: 'CI deploy', scope: 'write', key: expect.stringMatching(/^sl_[0-9A-Za-z]{28}$/),
      prefix: expect.any(String), last4: expect.any(String), createdAt: expect.any(String), lastUsedAt: null,
    });
    expect(created.prefix).toBe(created.key.slice(0, 7));
    expect(created.last4).toBe(created.key.slice(-4));
    expect((await h.call('POST', P, { token: created.key, body: { name: 'K', domain: h.domain() } })).status).toBe(201);
    const list = await h.call('GET', '/api/account/keys', { token: u.session });
    const text = await list.text();
    expect(text).not.toContain(created.key);
    const { keys } = JSON.parse(text);
    expect(keys[0]).toMatchObject({ id: created.id, name: 'CI deploy', scope: 'write' });
    // Only the digest is stored in Redis.
    expect(await h.deps.redis.exists(IdentityKeys.apiKey(await sha256Hex(created.key)))).toBe(1);
  });

  it('a read key created here cannot write', async () => {
    const u = await h.user('keys');
    const { key } = await (await h.call('POST', '/api/account/keys', { token: u.session, body: { scope: 'read' } })).json();
    expect((await h.call('POST', P, { token: key, body: { name: 'K', domain: h.domain() } })).status).toBe(403);
  });

  it.each([
    ['no scope', {}],
    ['unknown scope', { scope: 'admin' }],
  ])('POST 400: %s', async (_label, body) => {
    const u = await h.user('keys');
    const res = await h.call('POST', '/api/account/keys', { token: u.session, body });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'scope must be read or write' });
  });

  it('DELETE: a key in the warm cache is refused at once; others keep working', async () => {
    const u = await h.user('keys');
    expect((await h.call('GET', P, { token: u.writeKey })).status).toBe(200); // warm the cache
    const { keys } = await (await h.call('GET', '/api/account/keys', { token: u.session })).json();
    const write = keys.find((k: { scope: string }) => k.scope === 'write');
    const del = await h.call('DELETE', '/api/account/keys', { token: u.session, body: { id: write.id } });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ ok: true });
    const after = await h.call('GET', P, { token: u.writeKey });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual(UNAUTHORIZED);
    expect((await h.call('GET', P, { token: u.readKey })).status).toBe(200);
    const left = (await (await h.call('GET', '/api/account/keys', { token: u.session })).json()).keys;
    expect(left.map((k: { id: string }) => k.id)).not.toContain(write.id);
  });

  it('DELETE of an unknown id or another account’s key → 404, and that key still works', async () => {
    const [u, other] = await Promise.all([h.user('keys'), h.user('keys')]);
    const theirs = (await (await h.call('GET', '/api/account/keys', { token: other.session })).json()).keys[0];
    for (const id of ['key_doesnotexist', theirs.id]) {
      const res = await h.call('DELETE', '/api/account/keys', { token: u.session, body: { id } });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'API key not found' });
    }
    expect((await h.call('GET', P, { token: other.readKey })).status).toBe(200);
    const noId = await h.call('DELETE', '/api/account/keys', { token: u.session, body: {} });
    expect(noId.status).toBe(400);
    expect(await noId.json()).toEqual({ error: 'id is required' });
  });
});

describe('DELETE /api/account', () => {
  it('400 Pass `confirm` true without the confirmation; the account stays', async () => {
    const u = await h.user('gone');
    for (const body of [undefined, {}, { confirm: false }]) {
      const res = await h.call('DELETE', '/api/account', { token: u.session, body });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'Pass `confirm` true' });
    }
    expect((await h.call('GET', '/api/account/profile', { token: u.session })).status).toBe(200);
  });

  it('needs the password again: missing → 400, wrong → 403; the account stays', async () => {
    const u = await h.user('gone');
    const missing = await h.call('DELETE', '/api/account', { token: u.session, body: { confirm: true } });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: 'password is required to delete the account' });
    for (const password of ['not the password', '', u.password.toUpperCase()]) {
      const res = await h.call('DELETE', '/api/account', { token: u.session, body: { confirm: true, password } });
      expect(res.status, password).toBe(password === '' ? 400 : 403);
      expect(await res.json()).toEqual({ error: password === '' ? 'password is required to delete the account' : 'password is incorrect' });
    }
    const notString = await h.call('DELETE', '/api/account', { token: u.session, body: { confirm: true, password: 12345678 } });
    expect(notString.status).toBe(400);
    expect(await notString.json()).toEqual({ error: 'password must be a string' });
    // `confirm` is still checked first.
    const unconfirmed = await h.call('DELETE', '/api/account', { token: u.session, body: { password: u.password } });
    expect(unconfirmed.status).toBe(400);
    expect(await unconfirmed.json()).toEqual({ error: 'Pass `confirm` true' });
    expect((await h.call('GET', '/api/account/profile', { token: u.session })).status).toBe(200);
    expect((await login(u.email, u.password)).status).toBe(200);
  });

  it('removes the account, its keys, sessions, owned projects and memberships; the domain is free again', async () => {
    const [u, owner] = await Promise.all([h.user('gone'), h.user('owner')]);
    const mine = h.domain('mine');
    const theirs = h.domain('theirs');
    expect((await h.call('POST', P, { token: u.writeKey, body: { name: 'Mine', domain: mine } })).status).toBe(201);
    expect((await h.call('POST', P, { token: owner.writeKey, body: { name: 'Theirs', domain: theirs } })).status).toBe(201);
    await runAdmin(h.deps.redis, ['member:add', '--domain', theirs, '--email', u.email, '--role', 'admin']);
    const { id: myProjectId } = await (await h.call('GET', `${P}/${mine}`, { token: u.readKey })).json();
    const { id: theirProjectId } = await (await h.call('GET', `${P}/${theirs}`, { token: u.readKey })).json();
    const second = (await (await login(u.email, u.password)).json()).token;
    expect((await h.call('GET', P, { token: u.writeKey })).status).toBe(200); // warm key cache

    const res = await h.call('DELETE', '/api/account', { token: u.session, body: { confirm: true, password: u.password } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });

    for (const token of [u.writeKey, u.readKey, u.session, second]) {
      const r = await h.call('GET', P, { token });
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual(UNAUTHORIZED);
    }
    expect((await login(u.email, u.password)).status).toBe(401);
    const redis = h.deps.redis;
    expect(await redis.exists(
      IdentityKeys.account(u.accountId), IdentityKeys.accountByEmail(u.email), IdentityKeys.accountKeys(u.accountId),
      IdentityKeys.accountSessions(u.accountId), IdentityKeys.apiKey(await sha256Hex(u.writeKey)),
      IdentityKeys.session(await sha256Hex(second)), ProjectKeys.project(myProjectId), ProjectKeys.domain(mine),
    )).toBe(0);
    // The other owner's project stays, without the deleted member.
    expect((await h.call('GET', `${P}/${theirs}`, { token: owner.readKey })).status).toBe(200);
    expect(await redis.hget(ProjectKeys.members(theirProjectId), u.accountId)).toBeNull();
    // The owned domain may be taken by anyone now.
    expect((await h.call('POST', P, { token: owner.writeKey, body: { name: 'Reborn', domain: mine } })).status).toBe(201);
    // And the email may sign up again.
    expect(await runAdmin(redis, ['account:create', '--email', u.email])).toMatchObject({ email: u.email });
  });
});
