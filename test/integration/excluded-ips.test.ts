import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalIp } from '../../src/projects/excluded-ips.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

const CHROME =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const octet = () => Math.floor(Math.random() * 254) + 1;
const freshIp = () => `10.${octet()}.${octet()}.${octet()}`;

let h: Harness;
let owner: TestUser;
let admin: TestUser;
let member: TestUser;
let stranger: TestUser;
let domain: string;
let site: string;

const path = () => `/api/v1/projects/${domain}/excluded-ips`;
const put = (body: unknown, token = owner.writeKey) => h.call('PUT', path(), { token, body });
const event = (ip: string) =>
  h.app.request('/api/event', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'User-Agent': CHROME, 'X-Forwarded-For': ip },
    body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/` }),
  });

beforeAll(async () => {
  h = await createHarness({ env: { TRUST_PROXY: '1' } });
  [owner, admin, member, stranger] = await Promise.all(['owner', 'admin', 'member', 'stranger'].map((l) => h.user(l)));
  domain = h.domain('excl');
  const created = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Excl', domain } });
  site = (await created.json()).id;
  for (const [user, role] of [[admin, 'admin'], [member, 'member']] as const) {
    const res = await h.call('POST', `/api/v1/projects/${domain}/members`, { token: owner.writeKey, body: { email: user.email, role } });
    expect(res.status).toBe(202);
  }
});
afterAll(closeHarness);

describe('excluded client addresses', () => {
  it('canonical IPv6 spelling', () => {
    expect(canonicalIp('2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(canonicalIp('203.0.113.9')).toBe('203.0.113.9');
  });

  it('owners replace the list; events from listed addresses are dropped at once, others kept', async () => {
    const office = freshIp();
    const visitor = freshIp();
    // Cache the empty list first: the update must not wait for the cache to expire.
    expect((await event(office)).headers.get('x-sightline-dropped')).toBeNull();

    const res = await put({ ips: [office, ' 2001:DB8:0:0::1 ', office] });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ips: ['2001:db8::1', office].sort() });
    expect(await (await h.call('GET', path(), { token: owner.readKey })).json()).toEqual({ ips: ['2001:db8::1', office].sort() });

    const dropped = await event(office);
    expect(dropped.status).toBe(202);
    expect(dropped.headers.get('x-sightline-dropped')).toBe('excluded-ip');
    expect((await event('2001:db8::0:1')).headers.get('x-sightline-dropped')).toBe('excluded-ip');
    const kept = await event(visitor);
    expect(kept.status).toBe(202);
    expect(kept.headers.get('x-sightline-dropped')).toBeNull();

    // Server-side hits from a listed address are refused one by one.
    const hits = await h.call('POST', `/api/v1/projects/${domain}/hits`, {
      token: owner.writeKey,
      body: [{ path: '/', userAgent: CHROME, ip: office }, { path: '/', userAgent: CHROME, ip: visitor }],
    });
    expect(await hits.json()).toMatchObject({ accepted: 1, rejected: 1, errors: [{ index: 0, error: 'ip is excluded for this project' }] });

    // An admin may change it too; an empty list removes every exclusion.
    const cleared = await put({ ips: [] }, admin.writeKey);
    expect(await cleared.json()).toEqual({ ips: [] });
    expect((await event(office)).headers.get('x-sightline-dropped')).toBeNull();
  });

  it.each([
    ['no body', undefined, /JSON object with ips/],
    ['ips not an array', { ips: '10.0.0.1' }, /array of at most 100/],
    ['a host name', { ips: ['office.example.com'] }, /IPv4 or IPv6/],
    ['a CIDR range', { ips: ['10.0.0.0/8'] }, /IPv4 or IPv6/],
    ['101 addresses', { ips: Array.from({ length: 101 }, (_, i) => `10.1.${i >> 8}.${i & 255}`) }, /at most 100/],
  ])('400 for %s', async (_, body, message) => {
    const res = await put(body);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(message);
  });

  it('401 without a key, 403 for a read key, 404 for members and strangers like a missing project', async () => {
    expect((await h.call('GET', path())).status).toBe(401);
    expect((await put({ ips: [] }, owner.readKey)).status).toBe(403);
    const missing = await h.call('GET', '/api/v1/projects/missing.example.org/excluded-ips', { token: owner.writeKey });
    expect(missing.status).toBe(404);
    const missingBody = await missing.json();
    for (const user of [member, stranger]) {
      const get = await h.call('GET', path(), { token: user.writeKey });
      expect(get.status).toBe(404);
      expect(await get.json()).toEqual(missingBody);
      const change = await put({ ips: [] }, user.writeKey);
      expect(change.status).toBe(404);
      expect(await change.json()).toEqual(missingBody);
    }
  });
});
