import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import type { Deps } from '../../src/deps.js';
import { DUE_KEY } from '../../src/export/schedule-store.js';
import { PROJECT_CACHE_MS } from '../../src/ingest/state.js';
import { nodeExportStore } from '../../src/jobs/node-export-store.js';
import { runDueExport } from '../../src/jobs/scheduled-exports.js';
import { PURGE_AGAIN_KEY, runPendingPurges } from '../../src/projects/purge-again.js';
import { ProjectKeys } from '../../src/projects/store.js';
import { insertEvents, makeEvent } from '../helpers/events-gen.js';
import { createServices } from '../../src/services.js';
import { closeHarness, createHarness, listenAsNode, TEST_DATA_VERSION_KEY, type Harness, type Listening, type TestUser } from '../helpers/harness.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

let a: Harness;
let b: Harness;
let appA: App;
let depsA: Deps;
let nodeB: Listening;
let owner: TestUser;
let exportsDir: string;

const callA = (method: string, path: string, body?: unknown) =>
  Promise.resolve(
    appA.request(path, {
      method,
      headers: { Authorization: `Bearer ${owner.writeKey}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

async function createProject(label: string): Promise<{ id: string; domain: string }> {
  const domain = a.domain(label);
  const res = await callA('POST', '/api/v1/projects', { name: label, domain });
  expect(res.status).toBe(201);
  return { id: ((await res.json()) as { id: string }).id, domain };
}

const eventBody = (p: { id: string; domain: string }, path: string) => JSON.stringify({ site: p.id, kind: 'pageview', url: `https://${p.domain}${path}` });

/** `X-Sightline-Dropped` of one event sent to process A (in-process) or B (over HTTP, the Node fast path). */
async function sendA(p: { id: string; domain: string }, path = '/a'): Promise<string | null> {
  const res = await appA.request('/api/event', { method: 'POST', headers: { 'Content-Type': 'application/json', 'User-Agent': UA }, body: eventBody(p, path) });
  expect(res.status).toBe(202);
  return res.headers.get('x-sightline-dropped');
}
async function sendB(p: { id: string; domain: string }, path = '/b'): Promise<string | null> {
  const res = await fetch(`${nodeB.url}/api/event`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'User-Agent': UA }, body: eventBody(p, path) });
  expect(res.status).toBe(202);
  await res.arrayBuffer();
  return res.headers.get('x-sightline-dropped');
}

beforeAll(async () => {
  // Two app instances over the same Redis and ClickHouse: two processes of one deployment.
  a = await createHarness();
  b = await createHarness();
  exportsDir = mkdtempSync(join(tmpdir(), 'sightline-lifecycle-'));
  depsA = { ...a.deps, exportStore: nodeExportStore(exportsDir) };
  appA = createApp(depsA, createServices(depsA));
  nodeB = await listenAsNode(b);
  owner = await a.user('lifecycle');
});

afterAll(async () => {
  await nodeB?.close();
  rmSync(exportsDir, { recursive: true, force: true });
  await closeHarness();
});

describe('deleting a project', () => {
  it('removes its export schedule and the files the schedule wrote', async () => {
    const p = await createProject('exports');
    const keep = await createProject('keeps');
    for (const project of [p, keep]) {
      const put = await callA('PUT', `/api/v1/projects/${project.domain}/export/schedule`, { frequency: 'daily', period: 'today' });
      expect(put.status).toBe(201);
    }
    const { nextRunAt } = (await (await callA('GET', `/api/v1/projects/${p.domain}/export/schedule`)).json()) as { nextRunAt: string };
    // Only this file's schedules (Redis db 9 is shared with other test files running theirs).
    for (const project of [p, keep]) expect(await runDueExport(depsA, project.id, Date.parse(nextRunAt) + 60_000)).not.toBeNull();
    expect(readdirSync(join(exportsDir, p.id))).toHaveLength(1);

    const del = await callA('DELETE', `/api/v1/projects/${p.domain}`, { confirm: true });
    expect(del.status).toBe(200);
    expect(existsSync(join(exportsDir, p.id))).toBe(false);
    expect(await a.deps.redis.exists(ProjectKeys.exportSchedule(p.id), ProjectKeys.project(p.id))).toBe(0);
    expect(await a.deps.redis.zscore(DUE_KEY, p.id)).toBeNull();
    // The other project's schedule and file stay.
    expect(readdirSync(join(exportsDir, keep.id))).toHaveLength(1);
    expect(await a.deps.redis.zscore(DUE_KEY, keep.id)).not.toBeNull();
    expect((await callA('DELETE', `/api/v1/projects/${keep.domain}`, { confirm: true })).status).toBe(200);
    expect(existsSync(join(exportsDir, keep.id))).toBe(false);
  });

  it('every process drops its events (unknown-site) within 5 s; the deleting one at once', async () => {
    expect(PROJECT_CACHE_MS).toBeLessThan(5000);
    const p = await createProject('ingest');
    // Both processes have the project cached.
    expect(await sendA(p)).toBeNull();
    expect(await sendB(p)).toBeNull();

    // Process B keeps receiving events while A deletes the project.
    let stop = false;
    const seenByB: { at: number; dropped: string | null }[] = [];
    const traffic = (async () => {
      while (!stop) {
        seenByB.push({ at: Date.now(), dropped: await sendB(p) });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const del = await callA('DELETE', `/api/v1/projects/${p.domain}`, { confirm: true });
    expect(del.status).toBe(200);
    const deletedAt = Date.now();
    expect(await sendA(p)).toBe('unknown-site');

    for (let i = 0; i < 80 && !seenByB.some((s) => s.at > deletedAt + 5000); i++) await new Promise((r) => setTimeout(r, 100));
    stop = true;
    await traffic;
    const accepted = seenByB.filter((s) => s.dropped === null);
    const lastAccepted = accepted.length ? accepted[accepted.length - 1]!.at : 0;
    expect(lastAccepted).toBeLessThanOrEqual(deletedAt + 5000);
    // Once B drops them, it keeps dropping them.
    const firstDrop = seenByB.findIndex((s) => s.dropped !== null);
    expect(firstDrop).toBeGreaterThanOrEqual(0);
    expect(seenByB.slice(firstDrop).every((s) => s.dropped === 'unknown-site')).toBe(true);
    expect(seenByB[firstDrop]!.at).toBeLessThanOrEqual(deletedAt + 5000);

    // What a process accepted in its last seconds may reach ClickHouse after the purge (its batch
    // flushes later): a row inserted now stands for it. The second purge, once due, removes it.
    await insertEvents(a.deps.rowStore, p.id, [makeEvent({ ts: Date.now() - 1000, path: '/late', visitor: 1 })]);
    await a.deps.redis.set(ProjectKeys.installationSeen(p.id), new Date().toISOString());
    const rows = async () => {
      const rs = await a.deps.clickhouse.query({ query: 'SELECT count() AS n FROM events WHERE project_id = {id:String}', query_params: { id: p.id }, format: 'JSONEachRow' });
      return Number(((await rs.json()) as { n: string }[])[0]!.n);
    };
    expect(await rows()).toBeGreaterThanOrEqual(1);
    const due = await a.deps.redis.zscore(PURGE_AGAIN_KEY, p.id);
    expect(due).not.toBeNull();
    expect(Number(due)).toBeGreaterThanOrEqual(deletedAt + a.deps.config.INGEST_FLUSH_MS);
    expect(await runPendingPurges(a.deps, Number(due) - 1)).toBeGreaterThanOrEqual(0);
    expect(await rows()).toBeGreaterThanOrEqual(1);
    // Older entries (other test files, earlier runs) go first, at most 100 a tick.
    for (let i = 0; i < 50 && (await a.deps.redis.zscore(PURGE_AGAIN_KEY, p.id)) !== null; i++) await runPendingPurges(a.deps, Number(due));
    expect(await a.deps.redis.zscore(PURGE_AGAIN_KEY, p.id)).toBeNull();
    expect(await rows()).toBe(0);
    expect(await a.deps.redis.exists(ProjectKeys.installationSeen(p.id))).toBe(0);
    // The late insert moved the project's data versions; once purged, nothing of them is kept.
    const kept = await a.deps.redis.hkeys(TEST_DATA_VERSION_KEY);
    expect(kept.filter((f) => f.endsWith(p.id))).toEqual([]);
  });
});
