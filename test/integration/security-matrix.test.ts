import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../scripts/admin.js';
import { createApp } from '../../src/app.js';
import type { TestUser } from '../helpers/harness.js';
import { useHarness } from '../helpers/setup.js';

/**
 * Who may do what to which project: the 404 rule, scopes, credential refusal before Redis,
 * sessions versus API keys, and the owner/admin/member roles.
 */
const ctx = useHarness(['alice', 'bob']);

const P = '/api/v1/projects';
const NOT_FOUND = JSON.stringify({ error: 'Project not found' });

async function project(user: TestUser): Promise<string> {
  const domain = ctx.h.domain();
  const res = await ctx.h.call('POST', P, { token: user.writeKey, body: { name: 'Site', domain } });
  expect(res.status).toBe(201);
  return domain;
}

/** Each route of a single project, with a body that would succeed for its owner. */
const ROUTES: { name: string; method: string; path: (d: string) => string; body?: unknown; ok: number }[] = [
  { name: 'GET one', method: 'GET', path: (d) => `${P}/${d}`, ok: 200 },
  { name: 'PATCH', method: 'PATCH', path: (d) => `${P}/${d}`, body: { name: 'Changed' }, ok: 200 },
  { name: 'DELETE', method: 'DELETE', path: (d) => `${P}/${d}`, body: { confirm: true }, ok: 200 },
  { name: 'POST install/verify', method: 'POST', path: (d) => `${P}/${d}/install/verify`, ok: 200 },
];

describe('route × {own, another account’s, nonexistent, deleted}', () => {
  for (const route of ROUTES) {
    it(`${route.name}: own succeeds; foreign, missing and deleted answer the identical 404`, async () => {
      const own = await project(ctx.alice);
      const foreign = await project(ctx.bob);
      const missing = ctx.h.domain('missing');
      const deleted = await project(ctx.alice);
      const del = await ctx.h.call('DELETE', `${P}/${deleted}`, { token: ctx.alice.writeKey, body: { confirm: true } });
      expect(del.status).toBe(200);

      const call = (d: string) => ctx.h.call(route.method, route.path(d), { token: ctx.alice.writeKey, body: route.body });
      expect((await call(own)).status).toBe(route.ok);

      const answers = await Promise.all([foreign, missing, deleted].map(async (d) => {
        const res = await call(d);
        return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
      }));
      for (const a of answers) expect(a).toEqual({ status: 404, type: answers[0].type, body: NOT_FOUND });

      // The foreign project is untouched by the refused call.
      const bobView = await (await ctx.h.call('GET', `${P}/${foreign}`, { token: ctx.bob.readKey })).json();
      expect(bobView).toMatchObject({ name: 'Site', domain: foreign });
    });
  }
});

describe('read-only key on every write → 403, nothing changes', () => {
  it('POST create', async () => {
    const domain = ctx.h.domain();
    const res = await ctx.h.call('POST', P, { token: ctx.alice.readKey, body: { name: 'R', domain } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'API key is read-only' });
    expect((await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).status).toBe(404);
  });

  for (const route of ROUTES.filter((r) => r.method !== 'GET')) {
    it(route.name, async () => {
      const domain = await project(ctx.alice);
      const res = await ctx.h.call(route.method, route.path(domain), { token: ctx.alice.readKey, body: route.body });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: 'API key is read-only' });
      const detail = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
      expect(detail).toMatchObject({ name: 'Site', installationSeenAt: null });
    });
  }

  it('the read key still reads', async () => {
    const domain = await project(ctx.alice);
    expect((await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).status).toBe(200);
    expect((await ctx.h.call('GET', P, { token: ctx.alice.readKey })).status).toBe(200);
  });
});

describe('malformed credentials → 401 without any Redis lookup', () => {
  /** The app over a Redis wrapped so every method call is counted. */
  function countingApp() {
    const counter = { calls: 0 };
    const redis = new Proxy(ctx.h.deps.redis, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          counter.calls++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { app: createApp({ ...ctx.h.deps, redis }), counter };
  }

  const realKey = () => ctx.alice.writeKey;
  const flipLast = (t: string) => t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A');
  const cases: [string, () => string | undefined][] = [
    ['no Authorization header', () => undefined],
    ['empty Bearer', () => 'Bearer '],
    ['Basic scheme', () => `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['garbled key', () => 'Bearer sl_not-a-key'],
    ['key with a bad checksum', () => `Bearer ${flipLast(realKey())}`],
    ['key with a changed body', () => `Bearer ${realKey().slice(0, 5)}${realKey()[5] === 'x' ? 'y' : 'x'}${realKey().slice(6)}`],
    ['session token with a bad checksum', () => `Bearer ${flipLast(ctx.alice.session)}`],
    ['two tokens', () => `Bearer ${realKey()} ${realKey()}`],
  ];

  const routes: [string, string, unknown?][] = [
    ['GET', P],
    ['POST', P, { name: 'X', domain: 'never-created.example.com' }],
    ['GET', `${P}/anything.example.com`],
    ['POST', `${P}/anything.example.com/install/verify`],
    ['GET', '/api/account/profile'],
    ['GET', '/api/account/keys'],
    ['DELETE', '/api/account', { confirm: true }],
    ['POST', '/api/auth/logout'],
  ];

  for (const [label, header] of cases) {
    it(label, async () => {
      const { app, counter } = countingApp();
      for (const [method, path, body] of routes) {
        const auth = header();
        const res = await app.request(path, {
          method,
          headers: { ...(auth ? { Authorization: auth } : {}), 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(await res.json()).toEqual({ error: 'Invalid or missing API key' });
      }
      expect(counter.calls).toBe(0);
    });
  }

  it('control: a valid key does reach Redis through the counted wrapper', async () => {
    const { app, counter } = countingApp();
    const res = await app.request(P, { headers: { Authorization: `Bearer ${ctx.alice.readKey}` } });
    expect(res.status).toBe(200);
    expect(counter.calls).toBeGreaterThan(0);
  });

  it('a well-formed key that was never issued → 401 (after its lookup)', async () => {
    const { generateToken } = await import('../../src/auth/tokens.js');
    const res = await ctx.h.call('GET', P, { token: generateToken('key') });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Invalid or missing API key' });
  });
});

describe('API keys on session-only routes → 401', () => {
  const sessionOnly: [string, string, unknown?][] = [
    ['GET', '/api/account/profile'],
    ['PATCH', '/api/account/profile', { name: 'Hacker' }],
    ['GET', '/api/account/keys'],
    ['POST', '/api/account/keys', { scope: 'write' }],
    ['DELETE', '/api/account/keys', { id: 'key_x' }],
    ['DELETE', '/api/account', { confirm: true }],
    ['POST', '/api/auth/logout'],
  ];
  for (const [method, path, body] of sessionOnly) {
    it(`${method} ${path}`, async () => {
      for (const token of [ctx.alice.writeKey, ctx.alice.readKey]) {
        const res = await ctx.h.call(method, path, { token, body });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: 'Invalid or missing API key' });
      }
      // The same call with a session passes authentication (a throwaway account: it may be deleted).
      const withSession = await ctx.h.call(method, path, { token: (await ctx.h.user('throwaway')).session, body });
      expect(withSession.status).not.toBe(401);
    });
  }

  it('the account survives a DELETE /api/account made with its API key', async () => {
    expect((await ctx.h.call('GET', '/api/account/profile', { token: ctx.alice.session })).status).toBe(200);
    expect((await ctx.h.call('GET', P, { token: ctx.alice.writeKey })).status).toBe(200);
  });
});

describe('a session token on /api/v1 acts with its account’s rights', () => {
  it('lists, creates, reads, updates, verifies and deletes its own projects', async () => {
    const s = ctx.alice.session;
    const domain = ctx.h.domain('sess');
    expect((await ctx.h.call('POST', P, { token: s, body: { name: 'By session', domain } })).status).toBe(201);
    const list = await (await ctx.h.call('GET', P, { token: ctx.alice.readKey })).json();
    expect(list.projects.map((p: { domain: string }) => p.domain)).toContain(domain);
    expect((await (await ctx.h.call('GET', `${P}/${domain}`, { token: s })).json()).isOwner).toBe(true);
    expect((await ctx.h.call('PATCH', `${P}/${domain}`, { token: s, body: { publicStatsEnabled: true } })).status).toBe(200);
    expect(await (await ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: s })).json()).toEqual({ verified: false, installationSeenAt: null });
    expect((await ctx.h.call('DELETE', `${P}/${domain}`, { token: s, body: { confirm: true } })).status).toBe(200);
  });

  it('sees another account’s project as not found', async () => {
    const foreign = await project(ctx.bob);
    for (const [method, path, body] of [['GET', `${P}/${foreign}`], ['PATCH', `${P}/${foreign}`, { name: 'X' }], ['POST', `${P}/${foreign}/install/verify`]] as const) {
      const res = await ctx.h.call(method, path, { token: ctx.alice.session, body });
      expect(res.status).toBe(404);
      expect(await res.text()).toBe(NOT_FOUND);
    }
  });
});

describe('roles added with the admin CLI', () => {
  it('member: sees the project (accessRole member, isOwner false); PATCH, DELETE and verify → 404', async () => {
    const domain = await project(ctx.alice);
    const carol = await ctx.h.user('carol');
    expect(await runAdmin(ctx.h.deps.redis, ['member:add', '--domain', domain, '--email', carol.email, '--role', 'member'])).toEqual({
      domain, email: carol.email, role: 'member',
    });
    const list = await (await ctx.h.call('GET', P, { token: carol.readKey })).json();
    expect(list.projects).toEqual([expect.objectContaining({ domain, accessRole: 'member' })]);
    const detail = await (await ctx.h.call('GET', `${P}/${domain}`, { token: carol.readKey })).json();
    expect(detail).toMatchObject({ domain, isOwner: false });
    for (const [method, path, body] of [
      ['PATCH', `${P}/${domain}`, { name: 'Member was here' }],
      ['DELETE', `${P}/${domain}`, { confirm: true }],
      ['POST', `${P}/${domain}/install/verify`, undefined],
    ] as const) {
      const res = await ctx.h.call(method, path, { token: carol.writeKey, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.text()).toBe(NOT_FOUND);
    }
    expect((await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json()).name).toBe('Site');
    // The owner's view is unchanged by the member.
    const owner = await (await ctx.h.call('GET', P, { token: ctx.alice.readKey })).json();
    expect(owner.projects.find((p: { domain: string }) => p.domain === domain).accessRole).toBe('owner');
  });

  it('admin: accessRole admin, may verify, may not PATCH or DELETE', async () => {
    const domain = await project(ctx.alice);
    const dave = await ctx.h.user('dave');
    await runAdmin(ctx.h.deps.redis, ['member:add', '--domain', `https://www.${domain}/`, '--email', dave.email, '--role', 'admin']);
    const list = await (await ctx.h.call('GET', P, { token: dave.readKey })).json();
    expect(list.projects).toEqual([expect.objectContaining({ domain, accessRole: 'admin' })]);
    expect((await (await ctx.h.call('GET', `${P}/${domain}`, { token: dave.readKey })).json()).isOwner).toBe(false);
    const verify = await ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: dave.writeKey });
    expect(verify.status).toBe(200);
    expect(await verify.json()).toEqual({ verified: false, installationSeenAt: null });
    expect((await ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: dave.readKey })).status).toBe(403);
    expect((await ctx.h.call('PATCH', `${P}/${domain}`, { token: dave.writeKey, body: { name: 'X' } })).status).toBe(404);
    expect((await ctx.h.call('DELETE', `${P}/${domain}`, { token: dave.writeKey, body: { confirm: true } })).status).toBe(404);
  });

  it('deleting the project removes it from its members’ lists too', async () => {
    const domain = await project(ctx.alice);
    const erin = await ctx.h.user('erin');
    await runAdmin(ctx.h.deps.redis, ['member:add', '--domain', domain, '--email', erin.email, '--role', 'member']);
    expect((await (await ctx.h.call('GET', P, { token: erin.readKey })).json()).projects).toHaveLength(1);
    await ctx.h.call('DELETE', `${P}/${domain}`, { token: ctx.alice.writeKey, body: { confirm: true } });
    expect((await (await ctx.h.call('GET', P, { token: erin.readKey })).json()).projects).toEqual([]);
    expect((await ctx.h.call('GET', `${P}/${domain}`, { token: erin.readKey })).status).toBe(404);
  });
});
