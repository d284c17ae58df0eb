import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../scripts/admin.js';
import { createApiKey } from '../../src/auth/store.js';
import { ProjectKeys } from '../../src/projects/store.js';
import { closeHarness, createHarness, unique, type Harness, type TestUser } from '../helpers/harness.js';
import { newProject } from '../helpers/report-fixtures.js';

/** Adding a member by email must not tell the owner whether an account has that email. */
let h: Harness;
let owner: TestUser;
let site: { domain: string; id: string };

beforeAll(async () => {
  h = await createHarness();
  owner = await h.user('owner');
  site = await newProject(h, owner);
});
afterAll(closeHarness);

const members = (method: string, body?: unknown) => h.call(method, `/api/v1/projects/${site.domain}/members`, { token: owner.writeKey, body });
const newEmail = (label: string) => `${unique(label)}@test.example`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('POST /members answers alike for known and unknown emails', () => {
  it('same status, same body shape, and the list shows both as email and role only', async () => {
    const known = await h.user('known');
    const unknownEmail = newEmail('nobody');
    const a = await members('POST', { email: known.email, role: 'member' });
    const b = await members('POST', { email: unknownEmail.toUpperCase(), role: 'member' });
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    const [bodyA, bodyB] = [await a.json(), await b.json()];
    expect(bodyA).toEqual({ email: known.email, role: 'member' });
    expect(bodyB).toEqual({ email: unknownEmail, role: 'member' });
    expect(Object.keys(bodyA)).toEqual(Object.keys(bodyB));

    const list = (await (await members('GET')).json()) as { members: Record<string, unknown>[] };
    const rowOf = (email: string) => list.members.find((m) => m.email === email);
    expect(rowOf(known.email)).toEqual({ email: known.email, role: 'member' });
    expect(rowOf(unknownEmail)).toEqual({ email: unknownEmail, role: 'member' });
    expect(list.members[0]).toEqual({ email: owner.email, role: 'owner' });
  });

  it('takes the same order of time for both (medians of alternating tries)', async () => {
    const known = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => h.user(`timing${i}`)));
    const knownMs: number[] = [];
    const unknownMs: number[] = [];
    for (const user of known) {
      let t = performance.now();
      expect((await members('POST', { email: user.email, role: 'member' })).status).toBe(202);
      knownMs.push(performance.now() - t);
      t = performance.now();
      expect((await members('POST', { email: newEmail('ghost'), role: 'member' })).status).toBe(202);
      unknownMs.push(performance.now() - t);
    }
    const [k, u] = [median(knownMs), median(unknownMs)];
    // A few Redis round trips either way: within a factor of 3, or a few ms on a busy host.
    expect(Math.abs(k - u) < 5 || (k / u < 3 && u / k < 3), `known ${k.toFixed(2)} ms, unknown ${u.toFixed(2)} ms`).toBe(true);
  });
});

describe('an invitation becomes a membership when the account is created', () => {
  it('account:create joins the invited project with the invited role', async () => {
    const email = newEmail('later');
    expect((await members('POST', { email, role: 'admin' })).status).toBe(202);
    const created = (await runAdmin(h.deps.redis, ['account:create', '--email', email, '--password', 'later password'])) as { id: string };
    const { key } = await createApiKey(h.deps.redis, { accountId: created.id, scope: 'read' }, Date.now());
    expect((await h.call('GET', `/api/v1/projects/${site.domain}`, { token: key })).status).toBe(200);
    const mine = (await (await h.call('GET', '/api/v1/projects', { token: key })).json()) as { data?: unknown[]; projects?: unknown[] } | unknown[];
    expect(JSON.stringify(mine)).toContain(`"accessRole":"admin"`);
    // Now a member: listed once, and the invitation records are gone.
    const list = (await (await members('GET')).json()) as { members: { email: string }[] };
    expect(list.members.filter((m) => m.email === email)).toEqual([{ email, role: 'admin' }]);
    expect(await h.deps.redis.hget(ProjectKeys.invites(site.id), email)).toBeNull();
    expect(await h.deps.redis.exists(ProjectKeys.invitesOfEmail(email))).toBe(0);
  });

  it('DELETE withdraws an invitation: the later account does not join; unknown emails 404', async () => {
    const email = newEmail('withdrawn');
    await members('POST', { email, role: 'member' });
    expect((await members('DELETE', { email })).status).toBe(200);
    expect((await members('DELETE', { email })).status).toBe(404);
    const created = (await runAdmin(h.deps.redis, ['account:create', '--email', email])) as { id: string };
    const { key } = await createApiKey(h.deps.redis, { accountId: created.id, scope: 'read' }, Date.now());
    expect((await h.call('GET', `/api/v1/projects/${site.domain}`, { token: key })).status).toBe(404);
  });

  it('deleting the project forgets its invitations', async () => {
    const doomed = await newProject(h, owner);
    const email = newEmail('orphan');
    await h.call('POST', `/api/v1/projects/${doomed.domain}/members`, { token: owner.writeKey, body: { email, role: 'member' } });
    expect(await h.deps.redis.sismember(ProjectKeys.invitesOfEmail(email), doomed.id)).toBe(1);
    expect((await h.call('DELETE', `/api/v1/projects/${doomed.domain}`, { token: owner.writeKey, body: { confirm: true } })).status).toBe(200);
    expect(await h.deps.redis.exists(ProjectKeys.invites(doomed.id), ProjectKeys.invitesOfEmail(email))).toBe(0);
  });
});
