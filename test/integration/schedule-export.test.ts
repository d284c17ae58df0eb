import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { createApp, type App } from '../../src/app.js';
import type { Deps } from '../../src/deps.js';
import { DUE_KEY } from '../../src/export/schedule-store.js';
import { redisDataVersions } from '../../src/adapters/data-version.js';
import { AnswerCache } from '../../src/reports/answer-cache.js';
import { getProject, setMember } from '../../src/projects/store.js';
import { nodeExportStore } from '../../src/jobs/node-export-store.js';
import { startScheduler } from '../../src/jobs/node-scheduler.js';
import { runScheduledJobs } from '../../src/jobs/scheduled.js';
import type { Fetch } from '../../src/jobs/webhook.js';
import { insertEvents, makeEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

// Tuesday 10:00 UTC: the first daily slot after it is Wednesday 2026-03-11 00:00 UTC.
const T0 = Date.parse('2026-03-10T10:00:00Z');
const HOUR = 3_600_000;
const clock = fixedClock(T0);
const HOOK_ORIGIN = 'https://hooks.example.test';

let h: Harness;
let app: App;
let deps: Deps;
let owner: TestUser;
let member: TestUser;
let domain: string;
let projectId: string;
let exportsDir: string;
let secret: string;

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}
const received: Received[] = [];
let hook: Server;
let hookUrl: string;
/** The schedule's webhook is https (the API refuses http); the test routes it to a local server. */
const toLocalHook: Fetch = (url, init) => fetch(url.replace(HOOK_ORIGIN, hookUrl), init);

const call = (method: string, path: string, token: string, body?: unknown) =>
  Promise.resolve(
    app.request(path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
const schedulePath = () => `/api/v1/projects/${domain}/export/schedule`;
const run = async () => {
  // The jobs get an answer cache that keeps answers fresh, as npm start's: a scheduled export must
  // not ask through it (nothing it asked would then be watched and refreshed for minutes after the
  // run), so the cache never even reads a data version.
  const versions = redisDataVersions(deps.redis);
  let versionReads = 0;
  const counted = { ...versions, current: (id: string) => (versionReads++, versions.current(id)), both: (id: string) => (versionReads++, versions.both(id)) };
  const answers = new AnswerCache(counted, undefined, { watchMs: 600_000, clock });
  const summary = await runScheduledJobs({ ...deps, answers }, clock.now(), { fetch: toLocalHook, onlyProjects: new Set([projectId]) });
  expect(versionReads).toBe(0);
  expect(answers.refresher!.watching).toBe(0);
  await answers.close();
  expect(summary.errors).toEqual([]);
  return summary.exports.filter((r) => r.projectId === projectId);
};
const filesOnDisk = () => (existsSync(join(exportsDir, projectId)) ? readdirSync(join(exportsDir, projectId)).sort() : []);
const ourHooks = () => received.filter((r) => JSON.parse(r.body).domain === domain);

beforeAll(async () => {
  // The webhook is delivered to a local server: private targets allowed (test/integration/webhook-ssrf.test.ts checks the refusal).
  h = await createHarness({ clock, env: { PUBLIC_URL: 'https://stats.example.test', RATE_LIMIT_EXPORT_PER_MIN: '1000', WEBHOOK_ALLOW_PRIVATE: '1' } });
  exportsDir = mkdtempSync(join(tmpdir(), 'sightline-exports-'));
  deps = { ...h.deps, exportStore: nodeExportStore(exportsDir) };
  app = createApp(deps);
  [owner, member] = await Promise.all([h.user('sched-owner'), h.user('sched-member')]);
  domain = h.domain('sched');
  const res = await call('POST', '/api/v1/projects', owner.writeKey, { name: 'Scheduled', domain });
  expect(res.status, await res.clone().text()).toBe(201);
  projectId = ((await res.json()) as { id: string }).id;
  await setMember(h.deps.redis, (await getProject(h.deps.redis, projectId))!, member.accountId, 'member', T0);
  await insertEvents(h.deps.rowStore, projectId, [
    makeEvent({ ts: T0 - 2 * HOUR, path: '/pricing', visitor: 1 }),
    makeEvent({ ts: T0 - 3 * HOUR, path: '/pricing', visitor: 2 }),
    makeEvent({ ts: T0 - 4 * HOUR, path: '/', visitor: 3 }),
  ]);
  hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;
});

afterAll(async () => {
  // Leave no due schedule behind for later runs sharing Redis db 9.
  if (projectId) await h.deps.redis.zrem(DUE_KEY, projectId);
  if (hook) await new Promise<void>((r) => hook.close(() => r()));
  rmSync(exportsDir, { recursive: true, force: true });
  await closeHarness();
});

describe('export schedule routes', () => {
  it('refuses read keys, members, http webhooks and bad frequencies', async () => {
    expect((await call('PUT', schedulePath(), owner.readKey, { frequency: 'daily' })).status).toBe(403);
    const asMember = await call('PUT', schedulePath(), member.writeKey, { frequency: 'daily' });
    expect(asMember.status).toBe(404);
    expect(await asMember.json()).toEqual({ error: 'Project not found' });
    const http = await call('PUT', schedulePath(), owner.writeKey, { frequency: 'daily', webhookUrl: 'http://hooks.example.test/x' });
    expect(http.status).toBe(400);
    expect(await http.json()).toEqual({ error: 'webhookUrl must be an https URL (at most 2000 characters) or null' });
    const hourly = await call('PUT', schedulePath(), owner.writeKey, { frequency: 'hourly' });
    expect(hourly.status).toBe(400);
    expect(await hourly.json()).toEqual({ error: 'frequency must be one of: daily, weekly, monthly' });
    const period = await call('PUT', schedulePath(), owner.writeKey, { frequency: 'daily', period: '2y' });
    expect((await period.json()) as { error: string }).toEqual({ error: expect.stringMatching(/^period must be one of: 24h, today/) });
    const missing = await call('GET', schedulePath(), owner.writeKey);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'No export schedule for this project' });
  });

  it('creates a schedule once with its secret, then hides the secret', async () => {
    const created = await call('PUT', schedulePath(), owner.writeKey, { frequency: 'daily', period: '7d', webhookUrl: `${HOOK_ORIGIN}/sightline` });
    expect(created.status).toBe(201);
    const body = (await created.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ frequency: 'daily', period: '7d', limit: 100, webhookUrl: `${HOOK_ORIGIN}/sightline`, nextRunAt: '2026-03-11T00:00:00.000Z', lastRunAt: null });
    expect(body.webhookSecret).toMatch(/^whsec_[0-9a-f]{48}$/);
    secret = body.webhookSecret as string;

    const again = await call('PUT', schedulePath(), owner.writeKey, { frequency: 'daily', period: '7d', webhookUrl: `${HOOK_ORIGIN}/sightline` });
    expect(again.status).toBe(200);
    expect(await again.json()).not.toHaveProperty('webhookSecret');
    const read = (await (await call('GET', schedulePath(), owner.writeKey)).json()) as Record<string, unknown>;
    expect(read).toMatchObject({ frequency: 'daily', period: '7d', nextRunAt: '2026-03-11T00:00:00.000Z' });
    expect(read).not.toHaveProperty('webhookSecret');
    expect(JSON.stringify(read)).not.toContain(secret);
  });
});

describe('scheduled export job on Node', () => {
  it('does nothing before the slot', async () => {
    expect(await run()).toEqual([]);
    expect(filesOnDisk()).toEqual([]);
  });

  it('writes the export of a due schedule to DATA_DIR/exports and signs the webhook', async () => {
    clock.set(Date.parse('2026-03-11T00:05:00Z'));
    const runs = await run();
    expect(runs.map((r) => r.file)).toEqual([`sightline-${domain}-7d-2026-03-11.csv`]);
    expect(runs[0].webhook).toEqual({ status: 204 });
    expect(filesOnDisk()).toEqual([`sightline-${domain}-7d-2026-03-11.csv`]);

    // Same code as the export route: at the same instant the bytes are identical.
    const file = readFileSync(join(exportsDir, projectId, `sightline-${domain}-7d-2026-03-11.csv`), 'utf8');
    const live = await call('GET', `/api/v1/projects/${domain}/export?period=7d`, owner.readKey);
    expect(live.status).toBe(200);
    expect(file).toBe(await live.text());
    expect(file).toContain(`# domain: ${domain}`);
    expect(file).toMatch(/\r?\n\/pricing,2,2\r?\n/);

    const hooks = ourHooks();
    expect(hooks).toHaveLength(1);
    const expected = `sha256=${createHmac('sha256', secret).update(hooks[0].body).digest('hex')}`;
    const got = String(hooks[0].headers['x-sightline-signature']);
    expect(got.length).toBe(expected.length);
    expect(timingSafeEqual(Buffer.from(got), Buffer.from(expected))).toBe(true);
    expect(JSON.parse(hooks[0].body)).toMatchObject({
      type: 'export.ready',
      domain,
      period: '7d',
      file: `sightline-${domain}-7d-2026-03-11.csv`,
      slot: '2026-03-11T00:00:00.000Z',
      downloadUrl: `https://stats.example.test/api/v1/projects/${domain}/exports/sightline-${domain}-7d-2026-03-11.csv`,
    });
    const schedule = (await (await call('GET', schedulePath(), owner.writeKey)).json()) as Record<string, unknown>;
    expect(schedule).toMatchObject({ lastFile: `sightline-${domain}-7d-2026-03-11.csv`, nextRunAt: '2026-03-12T00:00:00.000Z' });
  });

  it('never runs a slot twice, even with runners racing', async () => {
    clock.set(Date.parse('2026-03-11T18:00:00Z'));
    expect(await run()).toEqual([]);
    expect(ourHooks()).toHaveLength(1);

    // Force the schedule due again inside the same slot: the slot record still stops it.
    await h.deps.redis.zadd(DUE_KEY, { score: T0, member: projectId });
    expect(await run()).toEqual([]);

    // Two runners at the next slot: the Redis lock lets exactly one through.
    clock.set(Date.parse('2026-03-12T00:01:00Z'));
    const [a, b] = await Promise.all([run(), run()]);
    expect([...a, ...b].map((r) => r.file)).toEqual([`sightline-${domain}-7d-2026-03-12.csv`]);
    expect(ourHooks()).toHaveLength(2);
  });

  it('catches up missed runs once, not once per missed slot', async () => {
    clock.set(Date.parse('2026-03-16T09:30:00Z')); // slots of the 13th, 14th, 15th and 16th passed
    const runs = await run();
    expect(runs.map((r) => r.file)).toEqual([`sightline-${domain}-7d-2026-03-16.csv`]);
    expect(await run()).toEqual([]);
    expect(filesOnDisk()).toEqual([
      `sightline-${domain}-7d-2026-03-11.csv`,
      `sightline-${domain}-7d-2026-03-12.csv`,
      `sightline-${domain}-7d-2026-03-16.csv`,
    ]);
    const schedule = (await (await call('GET', schedulePath(), owner.writeKey)).json()) as Record<string, unknown>;
    expect(schedule.nextRunAt).toBe('2026-03-17T00:00:00.000Z');
  });

  it('runs from the in-process scheduler and stops cleanly', async () => {
    clock.set(Date.parse('2026-03-17T00:02:00Z'));
    const scheduler = startScheduler(deps, { intervalMs: 50, jobs: { onlyProjects: new Set([projectId]) } });
    const want = `sightline-${domain}-7d-2026-03-17.csv`;
    for (let i = 0; i < 200 && !filesOnDisk().includes(want); i++) await new Promise((r) => setTimeout(r, 50));
    await scheduler.stop();
    expect(filesOnDisk()).toContain(want);
  });
});

describe('export file routes', () => {
  it('lists files newest first and downloads one; members may read', async () => {
    const list = await call('GET', `/api/v1/projects/${domain}/exports`, member.readKey);
    expect(list.status).toBe(200);
    const { exports } = (await list.json()) as { exports: { name: string; size: number }[] };
    expect(exports.map((e) => e.name).sort()).toEqual(filesOnDisk());
    const name = `sightline-${domain}-7d-2026-03-11.csv`;
    const one = await call('GET', `/api/v1/projects/${domain}/exports/${name}`, member.readKey);
    expect(one.status).toBe(200);
    expect(one.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(one.headers.get('content-disposition')).toBe(`attachment; filename="${name}"`);
    expect(await one.text()).toBe(readFileSync(join(exportsDir, projectId, name), 'utf8'));
    expect(exports.find((e) => e.name === name)?.size).toBe(Buffer.byteLength(readFileSync(join(exportsDir, projectId, name))));
  });

  it('answers 404 for names outside the pattern, unknown files and strangers', async () => {
    const stranger = await h.user('sched-stranger');
    for (const name of ['sightline-x-7d-2026-03-11.txt', `sightline-${domain}-7d-2020-01-01.csv`, 'x%2F..%2F..%2Fa.csv', `..%5Csightline-${domain}-7d-2026-03-11.csv`]) {
      const res = await call('GET', `/api/v1/projects/${domain}/exports/${name}`, owner.readKey);
      expect(res.status, name).toBe(404);
      expect(await res.json()).toEqual({ error: 'Export not found' });
    }
    // Dot segments never even reach the route.
    for (const name of ['..%2F..%2Fetc%2Fpasswd', '%2E%2E']) {
      expect((await call('GET', `/api/v1/projects/${domain}/exports/${name}`, owner.readKey)).status, name).toBe(404);
    }
    const res = await call('GET', `/api/v1/projects/${domain}/exports`, stranger.readKey);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Project not found' });
  });

  it('deletes the schedule: no further runs, files stay', async () => {
    const del = await call('DELETE', schedulePath(), owner.writeKey);
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ ok: true });
    expect((await call('DELETE', schedulePath(), owner.writeKey)).status).toBe(404);
    clock.set(Date.parse('2026-03-20T00:00:00Z'));
    expect(await run()).toEqual([]);
    expect(filesOnDisk()).toHaveLength(4);
  });
});
