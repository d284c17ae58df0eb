import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

let h: Harness;
let alice: TestUser;
beforeAll(async () => {
  h = await createHarness();
  alice = await h.user('alice');
});
afterAll(closeHarness);

describe('projects API', () => {
  it('creates, lists newest first, reads, updates and deletes', async () => {
    const d1 = h.domain('one');
    const d2 = h.domain('two');
    const r1 = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'One', domain: `https://www.${d1}/x` } });
    expect(r1.status).toBe(201);
    const p1 = await r1.json();
    expect(p1).toMatchObject({ name: 'One', domain: d1, timeZone: 'UTC', accessRole: 'owner', icon: null });
    const r2 = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'Two', domain: d2, timeZone: 'Asia/Kolkata' } });
    expect(r2.status).toBe(201);
    const list = await (await h.call('GET', '/api/v1/projects', { token: alice.readKey })).json();
    const names = list.projects.map((p: { name: string }) => p.name);
    expect(names.indexOf('Two')).toBeLessThan(names.indexOf('One'));

    const detail = await (await h.call('GET', `/api/v1/projects/${d2}`, { token: alice.readKey })).json();
    expect(detail).toEqual({
      id: expect.any(String), name: 'Two', domain: d2, timeZone: 'Asia/Kolkata', publicStatsEnabled: false,
      brandColor: null, icon: null, installationSeenAt: null, createdAt: expect.any(String), isOwner: true,
    });

    const patched = await h.call('PATCH', `/api/v1/projects/${d2}`, { token: alice.writeKey, body: { name: 'Deux', publicStatsEnabled: true } });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toEqual({ id: detail.id, name: 'Deux', domain: d2, timeZone: 'Asia/Kolkata', publicStatsEnabled: true, installationSeenAt: null });

    const del = await h.call('DELETE', `/api/v1/projects/${d2}`, { token: alice.writeKey, body: { confirm: true } });
    expect(await del.json()).toEqual({ ok: true });
    const gone = await h.call('GET', `/api/v1/projects/${d2}`, { token: alice.readKey });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ error: 'Project not found' });
  });
});
