import { describe, expect, it } from 'vitest';
import { markInstallationSeen } from '../../src/projects/store.js';
import { createHarness, unique, type TestUser } from '../helpers/harness.js';
import { useHarness } from '../helpers/setup.js';

/**
 * Contract §7 for the projects routes: every status and message, each provoked for real over
 * the real Redis and the embedded ClickHouse.
 */
const ctx = useHarness(['alice', 'bob']);

const P = '/api/v1/projects';
const create = (token: string, body: unknown) => ctx.h.call('POST', P, { token, body });
const expectError = async (res: Response, status: number, error: string) => {
  expect(res.status).toBe(status);
  expect(await res.json()).toEqual({ error });
};
/** A fresh project of `user`; returns its normalized domain. */
async function project(user: TestUser, extra: Record<string, unknown> = {}): Promise<string> {
  const domain = ctx.h.domain();
  const res = await create(user.writeKey, { name: 'Site', domain, ...extra });
  expect(res.status).toBe(201);
  return domain;
}

describe('POST /api/v1/projects', () => {
  it.each([
    ['empty body', {}],
    ['no name', { domain: 'a-site.example.com' }],
    ['no domain', { name: 'A' }],
    ['empty name', { name: '', domain: 'a-site.example.com' }],
    ['blank name', { name: '   ', domain: 'a-site.example.com' }],
    ['empty domain', { name: 'A', domain: '' }],
    ['name of the wrong type', { name: 5, domain: 'a-site.example.com' }],
    ['domain of the wrong type', { name: 'A', domain: ['a.com'] }],
    ['a JSON array', []],
    ['JSON null', null],
  ])('400 name and domain are required: %s', async (_label, body) => {
    await expectError(await create(ctx.alice.writeKey, body), 400, 'name and domain are required');
  });

  it('400 name and domain are required when no body is sent', async () => {
    await expectError(await ctx.h.call('POST', P, { token: ctx.alice.writeKey }), 400, 'name and domain are required');
  });

  it('400 for a body that is not JSON', async () => {
    const res = await ctx.h.call('POST', P, { token: ctx.alice.writeKey, body: '{"name":' });
    expect(res.status).toBe(400);
    expect(Object.keys(await res.json())).toEqual(['error']);
  });

  it('201 with the Project shape; name trimmed; timeZone defaults to UTC', async () => {
    const domain = ctx.h.domain();
    const res = await create(ctx.alice.writeKey, { name: '  My site  ', domain });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      name: 'My site',
      domain,
      timeZone: 'UTC',
      createdAt: expect.any(String),
      accessRole: 'owner',
      icon: null,
    });
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
  });

  it('name of exactly 80 characters → 201; 81 characters → 400', async () => {
    const ok = await create(ctx.alice.writeKey, { name: 'n'.repeat(80), domain: ctx.h.domain() });
    expect(ok.status).toBe(201);
    expect((await ok.json()).name).toHaveLength(80);
    const domain = ctx.h.domain();
    await expectError(await create(ctx.alice.writeKey, { name: 'n'.repeat(81), domain }), 400, 'name must be at most 80 characters');
    // Nothing was claimed by the refused create.
    expect((await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).status).toBe(404);
  });

  it('timeZone: a valid IANA zone is kept, an invalid one → 400', async () => {
    const domain = await project(ctx.alice, { timeZone: 'America/New_York' });
    const detail = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
    expect(detail.timeZone).toBe('America/New_York');
    for (const timeZone of ['Mars/Olympus', 'UTC+2', '', 42]) {
      const res = await create(ctx.alice.writeKey, { name: 'A', domain: ctx.h.domain(), timeZone });
      expect(res.status, String(timeZone)).toBe(400);
      expect((await res.json()).error).toMatch(/timeZone/);
    }
  });

  it('invalid domain → 400', async () => {
    for (const domain of ['localhost', 'a..b', 'not a domain', 'https://', '10.0.0.1']) {
      await expectError(await create(ctx.alice.writeKey, { name: 'A', domain }), 400, 'domain is not a valid hostname');
    }
  });

  it('normalizes the domain through the API: each input → 201 with its form, or 400', async () => {
    const u = unique('n');
    const table: [string, string | null][] = [
      [`HTTPS://WWW.${u}-a.Example.COM:443/path?q#f`, `${u}-a.example.com`],
      [`${u}-b.example.com.`, `${u}-b.example.com`],
      [`${u}.münchen.de`, `${u}.xn--mnchen-3ya.de`],
      [`user@${u}-c.host.com`, `${u}-c.host.com`],
      ['', null],
      ['a..b', null],
      ['localhost', null],
      [`${'l'.repeat(300)}.com`, null],
    ];
    for (const [input, expected] of table) {
      const res = await create(ctx.alice.writeKey, { name: 'N', domain: input });
      if (expected === null) {
        expect(res.status, input).toBe(400);
        expect((await res.json()).error).toMatch(/domain/);
      } else {
        expect(res.status, input).toBe(201);
        expect((await res.json()).domain).toBe(expected);
        // The detail route finds it under the normalized form.
        expect((await ctx.h.call('GET', `${P}/${expected}`, { token: ctx.alice.readKey })).status).toBe(200);
      }
    }
  });

  it('400 You already have a project for this domain (any spelling of it)', async () => {
    const domain = await project(ctx.alice);
    for (const spelling of [domain, `https://www.${domain.toUpperCase()}/pricing`]) {
      await expectError(await create(ctx.alice.writeKey, { name: 'Again', domain: spelling }), 400, 'You already have a project for this domain');
    }
  });

  it('400 <domain> is already added to another account', async () => {
    const domain = await project(ctx.alice);
    await expectError(
      await create(ctx.bob.writeKey, { name: 'Mine', domain: `http://${domain}/` }),
      400,
      `${domain} is already added to another account`,
    );
  });

  it('401 Invalid or missing API key; 403 API key is read-only', async () => {
    await expectError(await ctx.h.call('POST', P, { body: { name: 'A', domain: ctx.h.domain() } }), 401, 'Invalid or missing API key');
    await expectError(await create(ctx.alice.readKey, { name: 'A', domain: ctx.h.domain() }), 403, 'API key is read-only');
  });
});

describe('GET /api/v1/projects', () => {
  it('lists only the caller’s projects, newest first, as Project list items', async () => {
    const carol = await ctx.h.user('carol');
    const d1 = await project(carol);
    const d2 = await project(carol);
    const d3 = await project(carol);
    await project(ctx.bob);
    const res = await ctx.h.call('GET', P, { token: carol.readKey });
    expect(res.status).toBe(200);
    const { projects } = await res.json();
    expect(projects.map((p: { domain: string }) => p.domain)).toEqual([d3, d2, d1]);
    for (const p of projects) expect(Object.keys(p).sort()).toEqual(['accessRole', 'createdAt', 'domain', 'icon', 'id', 'name', 'timeZone']);
  });

  it('an account with no projects gets an empty list; no key → 401', async () => {
    const dave = await ctx.h.user('dave');
    expect(await (await ctx.h.call('GET', P, { token: dave.readKey })).json()).toEqual({ projects: [] });
    await expectError(await ctx.h.call('GET', P), 401, 'Invalid or missing API key');
  });
});

describe('GET /api/v1/projects/{domain}', () => {
  it('returns every field of §2.2; 404 Project not found for an unknown domain', async () => {
    const domain = await project(ctx.alice, { timeZone: 'Europe/Berlin' });
    const res = await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: expect.any(String), name: 'Site', domain, timeZone: 'Europe/Berlin', publicStatsEnabled: false,
      brandColor: null, icon: null, installationSeenAt: null, createdAt: expect.any(String), isOwner: true,
    });
    await expectError(await ctx.h.call('GET', `${P}/${ctx.h.domain()}`, { token: ctx.alice.readKey }), 404, 'Project not found');
  });
});

describe('PATCH /api/v1/projects/{domain}', () => {
  it('updates the contract fields and answers with the values after the update', async () => {
    const domain = await project(ctx.alice);
    const res = await ctx.h.call('PATCH', `${P}/${domain}`, {
      token: ctx.alice.writeKey,
      body: { name: 'Renamed', timeZone: 'Asia/Tokyo', publicStatsEnabled: true },
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ id: expect.any(String), name: 'Renamed', domain, timeZone: 'Asia/Tokyo', publicStatsEnabled: true, installationSeenAt: null });
    const detail = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
    expect(detail).toMatchObject({ name: 'Renamed', timeZone: 'Asia/Tokyo', publicStatsEnabled: true });
  });

  it('accepts brandColor and icon for the dashboard', async () => {
    const domain = await project(ctx.alice);
    const res = await ctx.h.call('PATCH', `${P}/${domain}`, { token: ctx.alice.writeKey, body: { brandColor: '#aa00FF', icon: 'https://cdn.example.com/i.png' } });
    expect(res.status).toBe(200);
    const detail = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
    expect(detail).toMatchObject({ brandColor: '#aa00FF', icon: 'https://cdn.example.com/i.png' });
    await ctx.h.call('PATCH', `${P}/${domain}`, { token: ctx.alice.writeKey, body: { brandColor: null, icon: null } });
    expect(await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json()).toMatchObject({ brandColor: null, icon: null });
  });

  it.each([
    ['empty body', {}],
    ['unknown field only', { color: 'red' }],
    ['unknown field beside a valid one', { name: 'Fine', domain: 'other.example.com' }],
    ['empty name', { name: '' }],
    ['name over 80 characters', { name: 'x'.repeat(81) }],
    ['invalid timeZone', { timeZone: 'Nowhere/City' }],
    ['publicStatsEnabled not a boolean', { publicStatsEnabled: 'yes' }],
    ['brandColor not #rrggbb', { brandColor: 'red' }],
    ['icon not https', { icon: 'http://cdn.example.com/i.png' }],
    ['a JSON array', []],
  ])('400 No valid fields to update: %s (and nothing changes)', async (_label, body) => {
    const domain = await project(ctx.alice);
    await expectError(await ctx.h.call('PATCH', `${P}/${domain}`, { token: ctx.alice.writeKey, body }), 400, 'No valid fields to update');
    const detail = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
    expect(detail).toMatchObject({ name: 'Site', domain, timeZone: 'UTC', publicStatsEnabled: false, brandColor: null, icon: null });
  });

  it('400 No valid fields to update when no body is sent', async () => {
    const domain = await project(ctx.alice);
    await expectError(await ctx.h.call('PATCH', `${P}/${domain}`, { token: ctx.alice.writeKey }), 400, 'No valid fields to update');
  });

  it('401, 403 read-only, 404 for another account’s project and for a missing one', async () => {
    const domain = await project(ctx.alice);
    await expectError(await ctx.h.call('PATCH', `${P}/${domain}`, { body: { name: 'X' } }), 401, 'Invalid or missing API key');
    await expectError(await ctx.h.call('PATCH', `${P}/${domain}`, { token: ctx.alice.readKey, body: { name: 'X' } }), 403, 'API key is read-only');
    await expectError(await ctx.h.call('PATCH', `${P}/${domain}`, { token: ctx.bob.writeKey, body: { name: 'X' } }), 404, 'Project not found');
    await expectError(await ctx.h.call('PATCH', `${P}/${ctx.h.domain()}`, { token: ctx.alice.writeKey, body: { name: 'X' } }), 404, 'Project not found');
  });
});

describe('DELETE /api/v1/projects/{domain}', () => {
  it.each([
    ['empty body', {}],
    ['confirm false', { confirm: false }],
    ['confirm as a string', { confirm: 'true' }],
    ['confirm as 1', { confirm: 1 }],
  ])('400 Pass `confirm` true: %s (the project stays)', async (_label, body) => {
    const domain = await project(ctx.alice);
    await expectError(await ctx.h.call('DELETE', `${P}/${domain}`, { token: ctx.alice.writeKey, body }), 400, 'Pass `confirm` true');
    expect((await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).status).toBe(200);
  });

  it('400 Pass `confirm` true when no body is sent', async () => {
    const domain = await project(ctx.alice);
    await expectError(await ctx.h.call('DELETE', `${P}/${domain}`, { token: ctx.alice.writeKey }), 400, 'Pass `confirm` true');
  });

  it('deletes metadata and analytics rows; the domain is free again with a new id and no install', async () => {
    const domain = await project(ctx.alice);
    const before = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
    await ctx.h.deps.sink.write('events', [{ project_id: before.id, ts: new Date().toISOString().replace('T', ' ').replace('Z', ''), kind: 'pageview', path: '/' }]);
    expect(await (await ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: ctx.alice.writeKey })).json()).toEqual({ verified: true, installationSeenAt: null });

    const del = await ctx.h.call('DELETE', `${P}/${domain}`, { token: ctx.alice.writeKey, body: { confirm: true } });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ ok: true });
    await expectError(await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey }), 404, 'Project not found');
    const list = await (await ctx.h.call('GET', P, { token: ctx.alice.readKey })).json();
    expect(list.projects.map((p: { domain: string }) => p.domain)).not.toContain(domain);
    const rows = await (await ctx.h.deps.clickhouse.query({
      query: 'SELECT count() AS n FROM events WHERE project_id = {id:String}',
      query_params: { id: before.id },
      format: 'JSONEachRow',
    })).json<{ n: number | string }>();
    expect(Number(rows[0].n)).toBe(0);

    // Another account may now take the domain; it gets a new id and an unverified install.
    const again = await create(ctx.bob.writeKey, { name: 'Bob’s', domain });
    expect(again.status).toBe(201);
    expect((await again.json()).id).not.toBe(before.id);
    expect(await (await ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: ctx.bob.writeKey })).json()).toEqual({ verified: false, installationSeenAt: null });
  });

  it('401, 403 read-only, 404 for another account’s project and a missing one', async () => {
    const domain = await project(ctx.alice);
    const body = { confirm: true };
    await expectError(await ctx.h.call('DELETE', `${P}/${domain}`, { body }), 401, 'Invalid or missing API key');
    await expectError(await ctx.h.call('DELETE', `${P}/${domain}`, { token: ctx.alice.readKey, body }), 403, 'API key is read-only');
    await expectError(await ctx.h.call('DELETE', `${P}/${domain}`, { token: ctx.bob.writeKey, body }), 404, 'Project not found');
    await expectError(await ctx.h.call('DELETE', `${P}/${ctx.h.domain()}`, { token: ctx.alice.writeKey, body }), 404, 'Project not found');
    expect((await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).status).toBe(200);
  });
});

describe('POST /api/v1/projects/{domain}/install/verify', () => {
  it('false and null before any event; stored timestamp once the pipeline marked it', async () => {
    const domain = await project(ctx.alice);
    const verify = () => ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: ctx.alice.writeKey });
    const first = await verify();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ verified: false, installationSeenAt: null });

    const { id } = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
    const seen = Date.parse('2026-01-02T03:04:05.678Z');
    await markInstallationSeen(ctx.h.deps.redis, id, seen);
    await markInstallationSeen(ctx.h.deps.redis, id, seen + 60_000); // later events keep the first time
    expect(await (await verify()).json()).toEqual({ verified: true, installationSeenAt: '2026-01-02T03:04:05.678Z' });
    const detail = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
    expect(detail.installationSeenAt).toBe('2026-01-02T03:04:05.678Z');
  });

  it('true with installationSeenAt null when verified only through events', async () => {
    const domain = await project(ctx.alice);
    const { id } = await (await ctx.h.call('GET', `${P}/${domain}`, { token: ctx.alice.readKey })).json();
    await ctx.h.deps.sink.write('events', [{ project_id: id, ts: '2026-01-01 00:00:00.000', kind: 'pageview', path: '/' }]);
    expect(await (await ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: ctx.alice.writeKey })).json()).toEqual({ verified: true, installationSeenAt: null });
  });

  it('401, 403 read-only, 404 foreign and missing', async () => {
    const domain = await project(ctx.alice);
    await expectError(await ctx.h.call('POST', `${P}/${domain}/install/verify`), 401, 'Invalid or missing API key');
    await expectError(await ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: ctx.alice.readKey }), 403, 'API key is read-only');
    await expectError(await ctx.h.call('POST', `${P}/${domain}/install/verify`, { token: ctx.bob.writeKey }), 404, 'Project not found');
    await expectError(await ctx.h.call('POST', `${P}/${ctx.h.domain()}/install/verify`, { token: ctx.alice.writeKey }), 404, 'Project not found');
  });
});

describe('429 Too many requests', () => {
  it('on PATCH and on install verify once their windows are full', async () => {
    const tight = await createHarness({ env: { RATE_LIMIT_PATCH_PER_MIN: '2', RATE_LIMIT_VERIFY_PER_MIN: '2' } });
    const erin = await tight.user('erin');
    const domain = tight.domain();
    expect((await tight.call('POST', P, { token: erin.writeKey, body: { name: 'E', domain } })).status).toBe(201);
    const patch = () => tight.call('PATCH', `${P}/${domain}`, { token: erin.writeKey, body: { name: 'E2' } });
    expect((await patch()).status).toBe(200);
    expect((await patch()).status).toBe(200);
    const limited = await patch();
    await expectError(limited, 429, 'Too many requests');
    expect(Number(limited.headers.get('Retry-After'))).toBeGreaterThan(0);

    const verify = () => tight.call('POST', `${P}/${domain}/install/verify`, { token: erin.writeKey });
    expect((await verify()).status).toBe(200);
    expect((await verify()).status).toBe(200);
    await expectError(await verify(), 429, 'Too many requests');
  });
});

describe('50 concurrent creates of one domain from two accounts', () => {
  it('exactly one 201; every other answer is the right 400 for its account', async () => {
    const [a, b] = await Promise.all([ctx.h.user('race-a'), ctx.h.user('race-b')]);
    const domain = ctx.h.domain('race');
    const callers = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b));
    const results = await Promise.all(
      callers.map(async (user) => {
        const res = await create(user.writeKey, { name: 'Race', domain });
        return { user, status: res.status, body: await res.json() };
      }),
    );
    const winners = results.filter((r) => r.status === 201);
    expect(winners).toHaveLength(1);
    const winner = winners[0].user;
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(400);
      expect(r.body).toEqual({
        error: r.user === winner ? 'You already have a project for this domain' : `${domain} is already added to another account`,
      });
    }
    // Exactly one project exists, owned by the winner; the loser sees none.
    const loser = winner === a ? b : a;
    const mine = (await (await ctx.h.call('GET', P, { token: winner.readKey })).json()).projects;
    expect(mine.filter((p: { domain: string }) => p.domain === domain)).toHaveLength(1);
    expect((await (await ctx.h.call('GET', P, { token: loser.readKey })).json()).projects).toEqual([]);
  });
});
