import { createClient } from '@clickhouse/client-web';
/// <reference types="@cloudflare/vitest-pool-workers/types" />
import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../../src/entry/worker.js';
import { call, eventually, makeUser, testEnv, unique, type WorkerUser } from './helpers.js';

let user: WorkerUser;
let domain: string;
let projectId: string;
const projectPath = () => `/api/v1/projects/${domain}`;

beforeAll(async () => {
  user = await makeUser();
  domain = `${unique('edge')}.example.com`;
  const res = await call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Edge', domain } });
  expect(res.status, await res.clone().text()).toBe(201);
  projectId = ((await res.json()) as { id: string }).id;
});

describe('Worker in workerd', () => {
  it('serves health and refuses missing or unknown keys with 401', async () => {
    expect(await (await call('GET', '/health')).json()).toEqual({ ok: true });
    // The real key with its last character changed (to another one: a key ending in x stays unknown too).
    const altered = user.writeKey.slice(0, -1) + (user.writeKey.endsWith('x') ? 'y' : 'x');
    for (const token of [undefined, 'sl_nope', altered]) {
      const res = await call('GET', '/api/v1/projects', { token });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'Invalid or missing API key' });
    }
  });

  it('round-trips a project with keys made through the Upstash bridge', async () => {
    const list = (await (await call('GET', '/api/v1/projects', { token: user.readKey })).json()) as { domain: string }[] | { projects: { domain: string }[] };
    const domains = (Array.isArray(list) ? list : list.projects).map((p) => p.domain);
    expect(domains).toContain(domain);
    const one = await call('GET', projectPath(), { token: user.readKey });
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ id: projectId, name: 'Edge', domain, isOwner: true });
    const readOnly = await call('PATCH', projectPath(), { token: user.readKey, body: { name: 'x' } });
    expect(readOnly.status).toBe(403);
    const renamed = await call('PATCH', projectPath(), { token: user.writeKey, body: { name: 'Edge 2' } });
    expect(renamed.status).toBe(200);
    expect(await (await call('GET', projectPath(), { token: user.readKey })).json()).toMatchObject({ name: 'Edge 2' });
  });

  it('imports NDJSON through the ClickHouse HTTP interface, and the rows are stored under the project', async () => {
    // A project of its own, so the live-ingest counts below stay exact.
    const importDomain = `${unique('edge-import')}.example.com`;
    const created = await call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Edge import', domain: importDomain } });
    expect(created.status, await created.clone().text()).toBe(201);
    const importId = ((await created.json()) as { id: string }).id;
    const lines = [0, 1, 2].map((i) => JSON.stringify({ timestamp: new Date(Date.now() - i * 60_000).toISOString(), kind: 'pageview', visitorId: `v${i}`, sessionId: `s${i}`, url: `https://${importDomain}/imported` }));
    const res = await call('POST', `/api/v1/projects/${importDomain}/import`, { token: user.writeKey, body: `${lines.join('\n')}\nnot json\n`, headers: { 'Content-Type': 'application/x-ndjson' } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ imported: 3, rejected: 1, errors: [{ line: 4, error: 'line is not valid JSON' }] });
    const web = createClient({ url: testEnv.CLICKHOUSE_URL });
    const rows = await (
      await web.query({
        query: 'SELECT path, toUInt32(count()) AS n, toUInt32(uniqExact(visitor_id)) AS visitors FROM events WHERE project_id = {id:String} GROUP BY path',
        query_params: { id: importId },
        format: 'JSONEachRow',
      })
    ).json();
    expect(rows).toEqual([{ path: '/imported', n: 3, visitors: 3 }]);
    await web.close();
  });

  it('answers a question of closed hours at once and sums its part after the answer, kept alive by the request’s waitUntil', async () => {
    const partsDomain = `${unique('edge-parts')}.example.com`;
    const created = await call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Edge parts', domain: partsDomain } });
    expect(created.status, await created.clone().text()).toBe(201);
    const partsId = ((await created.json()) as { id: string }).id;
    const view = (agoMs: number, visitor: string, referrer?: string) =>
      JSON.stringify({ timestamp: new Date(Date.now() - agoMs).toISOString(), kind: 'pageview', visitorId: visitor, sessionId: 's', url: `https://${partsDomain}/`, ...(referrer ? { referrer } : {}) });
    const lines = [view(2 * 86_400_000, 'a', 'https://www.google.com/'), view(2 * 86_400_000 - 60_000, 'a'), view(3 * 3_600_000, 'b'), view(1000, 'c', 'https://t.co/x')];
    const imported = await call('POST', `/api/v1/projects/${partsDomain}/import`, { token: user.writeKey, body: lines.join('\n'), headers: { 'Content-Type': 'application/x-ndjson' } });
    expect(await imported.json()).toEqual({ imported: 4, rejected: 0, errors: [] });

    // A context of our own: what the Worker hands to waitUntil is collected, not awaited for it.
    const handed: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => void handed.push(p), passThroughOnException: () => {}, props: {} };
    const request = new Request(`https://sightline.test/api/v1/projects/${partsDomain}/breakdown?period=7d&dimension=source&metrics=visitors,pageviews`, { headers: { Authorization: `Bearer ${user.readKey}` } });
    const res = await worker.fetch(request, testEnv as never, ctx as never);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown[] }).data).toEqual([
      { source: '(direct)', visitors: 1, pageviews: 1 },
      { source: 'google.com', visitors: 1, pageviews: 2 },
      { source: 't.co', visitors: 1, pageviews: 1 },
    ]);
    // The part's fill, the floorless mark (the import's visit of a second ago has no session floor) and the open sessions' floor.
    expect(handed).toHaveLength(3);
    await Promise.all(handed);
    const web = createClient({ url: testEnv.CLICKHOUSE_URL });
    const stored = await (
      await web.query({ query: 'SELECT marker, value FROM visit_parts WHERE project_id = {id:String} ORDER BY marker, value', query_params: { id: partsId }, format: 'JSONEachRow' })
    ).json();
    // The marker and the two sources before the cut (t.co came after it).
    expect(stored).toEqual([{ marker: 0, value: '(direct)' }, { marker: 0, value: 'google.com' }, { marker: 1, value: '' }]);
    await web.close();
  });

  it('ingests /api/event through the queue into ClickHouse, with geo from request.cf', async () => {
    const cf = { country: 'DE', region: 'Berlin', city: 'Berlin', asn: 3320, verifiedBotCategory: '' };
    for (const path of ['/edge', '/edge', '/other']) {
      const res = await call('POST', '/api/event', {
        body: { site: projectId, kind: 'pageview', url: `https://${domain}${path}` },
        headers: { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36', 'CF-Connecting-IP': '203.0.113.7' },
        cf,
      });
      expect(res.status).toBe(202);
      expect(res.headers.get('X-Sightline-Dropped')).toBeNull();
    }
    // The queue consumer (max_batch_timeout 2 s) inserts the batch; the report then sees it.
    const stats = await eventually(
      async () => (await (await call('GET', `${projectPath()}/stats?period=today`, { token: user.readKey })).json()) as { pageviews: number },
      (s) => s.pageviews === 3,
    );
    expect(stats).toMatchObject({ pageviews: 3, visitors: 1 });
    const pages = (await (await call('GET', `${projectPath()}/pages?period=today`, { token: user.readKey })).json()) as unknown;
    expect(JSON.stringify(pages)).toContain('"/edge"');
    const countries = (await (await call('GET', `${projectPath()}/countries?period=today`, { token: user.readKey })).json()) as unknown;
    expect(JSON.stringify(countries)).toContain('DE');
    // Region, city and the network's ASN come from request.cf too (stored, never shown in reports).
    const web = createClient({ url: testEnv.CLICKHOUSE_URL });
    const rows = await (
      await web.query({
        query: 'SELECT DISTINCT country_code, region, city, asn FROM events WHERE project_id = {projectId:String}',
        query_params: { projectId },
        format: 'JSONEachRow',
      })
    ).json();
    expect(rows).toEqual([{ country_code: 'DE', region: 'Berlin', city: 'Berlin', asn: 3320 }]);
    await web.close();
  });

  it('exports CSV', async () => {
    const res = await call('GET', `${projectPath()}/export?period=today`, { token: user.readKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Disposition')).toBe(`attachment; filename="sightline-${domain}-today.csv"`);
    const csv = await res.text();
    expect(csv).toContain(`# domain: ${domain}`);
    expect(csv).toMatch(/\r?\n\/edge,2,1\r?\n/);
  });

  it('the scheduled handler writes a due export to R2, listed and downloadable', async () => {
    const put = await call('PUT', `${projectPath()}/export/schedule`, { token: user.writeKey, body: { frequency: 'daily', period: 'today' } });
    expect(put.status).toBe(201);
    const { nextRunAt } = (await put.json()) as { nextRunAt: string };
    const at = Date.parse(nextRunAt) + 60_000;
    await worker.scheduled(createScheduledController({ scheduledTime: at, cron: '*/15 * * * *' }), testEnv as never, createExecutionContext() as never);
    const name = `sightline-${domain}-today-${nextRunAt.slice(0, 10)}.csv`;
    const object = await testEnv.EXPORTS.get(`${projectId}/${name}`);
    expect(object).not.toBeNull();
    const stored = await object!.text();
    expect(stored).toContain('# Sightline export');
    expect(stored).toContain(`# domain: ${domain}`);

    const list = (await (await call('GET', `${projectPath()}/exports`, { token: user.readKey })).json()) as { exports: { name: string }[] };
    expect(list.exports.map((e) => e.name)).toEqual([name]);
    const file = await call('GET', `${projectPath()}/exports/${name}`, { token: user.readKey });
    expect(file.status).toBe(200);
    expect(await file.text()).toBe(stored);
    // The same slot again: nothing new (the Redis lock and slot record).
    await worker.scheduled(createScheduledController({ scheduledTime: at + 60_000 }), testEnv as never, createExecutionContext() as never);
    expect((await testEnv.EXPORTS.list({ prefix: `${projectId}/` })).objects).toHaveLength(1);
    await call('DELETE', `${projectPath()}/export/schedule`, { token: user.writeKey });
  });

  it('isolates rows ClickHouse refuses: the rest is stored once, the refused rows go to R2 quarantine/', async () => {
    // Rows of the live project (rows of deleted projects are dropped before the insert, see below),
    // told apart from its other events by their path prefix.
    const pid = projectId;
    const prefix = `/${unique('poison')}/`;
    const row = (i: number, extra: Record<string, unknown> = {}) => ({ project_id: pid, ts: '2025-06-01 10:00:00.000', kind: 'pageview', visitor_id: String(i + 1), session_id: '1', path: `${prefix}q${i}`, ...extra });
    // Three messages; the second holds two rows with enum values the table does not know among good
    // rows (text such as a lone surrogate is made valid before the insert, so it cannot be poison).
    const bodies = [
      { table: 'events', rows: [0, 1, 2].map((i) => row(i)) },
      { table: 'events', rows: [row(3), row(4, { kind: 'not-a-kind' }), row(5), row(6, { kind: 'no-such-kind' }), row(7)] },
      { table: 'events', rows: [8, 9].map((i) => row(i)) },
    ];
    const batch = createMessageBatch('sightline-events', bodies.map((body, i) => ({ id: unique(`poison${i}`), timestamp: new Date(), attempts: 1, body })));
    const ctx = createExecutionContext();
    await worker.queue(batch as never, testEnv as never);
    const result = await getQueueResult(batch, ctx);
    expect(result.outcome).toBe('ok');
    expect(result.retryMessages).toEqual([]);
    expect([...result.explicitAcks].sort()).toEqual(batch.messages.map((m: { id: string }) => m.id).sort());

    const web = createClient({ url: testEnv.CLICKHOUSE_URL });
    const stored = async () =>
      (await (await web.query({ query: 'SELECT visitor_id FROM events WHERE project_id = {pid:String} AND startsWith(path, {prefix:String}) ORDER BY toUInt64(visitor_id)', query_params: { pid, prefix }, format: 'JSONEachRow' })).json<{ visitor_id: string }>()).map((r) => Number(r.visitor_id) - 1);
    expect(await stored()).toEqual([0, 1, 2, 3, 5, 7, 8, 9]);
    const objects = (await testEnv.EXPORTS.list({ prefix: 'quarantine/' })).objects;
    const records = (await Promise.all(objects.map(async (o: { key: string }) => (await (await testEnv.EXPORTS.get(o.key))!.text()).split('\n').filter(Boolean))))
      .flat()
      .map((l: string) => JSON.parse(l) as { table: string; error: string; row: { project_id: string; visitor_id: string; path: string } })
      .filter((r) => r.row.project_id === pid && r.row.path.startsWith(prefix));
    expect(records.map((r) => [Number(r.row.visitor_id) - 1, r.table])).toEqual([[4, 'events'], [6, 'events']]);
    expect(records[0].error).toMatch(/Unknown element 'not-a-kind'/);
    expect(records[1].error).toMatch(/Unknown element 'no-such-kind'/);

    // Redelivered (an ack lost), in another grouping: nothing is stored twice, the quarantine record is replaced.
    const again = createMessageBatch('sightline-events', [batch.messages[1], batch.messages[0]].map((m: { id: string; body: unknown }) => ({ id: m.id, timestamp: new Date(), attempts: 2, body: m.body })));
    await worker.queue(again as never, testEnv as never);
    await getQueueResult(again, createExecutionContext());
    expect(await stored()).toEqual([0, 1, 2, 3, 5, 7, 8, 9]);
  });

  it('retries a batch ClickHouse fails for another reason, and dead-letters it after max_retries', async () => {
    // A table that does not exist: not a data error (no row is to blame), so the queue retries it.
    // (Of a live project: rows of deleted projects are dropped before the insert.)
    const broken = { table: 'no_such_table', rows: [{ project_id: projectId }] };
    // Driving the consumer directly: the failing message is marked for retry, not acked.
    const batch = createMessageBatch('sightline-events', [{ id: unique('broken'), timestamp: new Date(), attempts: 1, body: broken }]);
    const ctx = createExecutionContext();
    await worker.queue(batch as never, testEnv as never);
    const result = await getQueueResult(batch, ctx);
    expect(result.outcome).toBe('ok');
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual([batch.messages[0].id]);
    expect(result.explicitAcks).toEqual([]);

    // Through the real queue, next to a good event: the good one is inserted, the broken one is
    // retried 5 times, then the DLQ consumer keeps it in R2.
    const statsNow = async () =>
      ((await (await call('GET', `${projectPath()}/stats?period=today`, { token: user.readKey })).json()) as { pageviews: number }).pageviews;
    const before = await statsNow();
    const [good] = await Promise.all([
      call('POST', '/api/event', { body: { site: projectId, kind: 'pageview', url: `https://${domain}/after` }, headers: { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0' } }),
      testEnv.EVENTS_QUEUE.send(broken),
    ]);
    expect(good.status).toBe(202);
    const dead = await eventually(
      async () => (await testEnv.EXPORTS.list({ prefix: 'dead-letter/' })).objects,
      (objects) => objects.length > 0,
      80_000,
    );
    const record = JSON.parse(await (await testEnv.EXPORTS.get(dead[0].key))!.text()) as { body: unknown };
    expect(record.body).toEqual(broken);
    expect(await eventually(statsNow, (n) => n === before + 1, 10_000)).toBe(before + 1);
  });

  it('deleting a project empties its R2 folder; queued events of it are dropped, the rest inserted', async () => {
    const goneDomain = `${unique('gone')}.example.com`;
    const created = await call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Gone', domain: goneDomain } });
    expect(created.status).toBe(201);
    const goneId = ((await created.json()) as { id: string }).id;
    // Files of its scheduled export in R2 go with it; another project's stay.
    for (const day of ['01', '02', '03']) await testEnv.EXPORTS.put(`${goneId}/sightline-${goneDomain}-today-2026-01-${day}.csv`, 'x');
    const deleted = await call('DELETE', `/api/v1/projects/${goneDomain}`, { token: user.writeKey, body: { confirm: true } });
    expect(deleted.status).toBe(200);
    expect((await testEnv.EXPORTS.list({ prefix: `${goneId}/` })).objects).toEqual([]);
    expect((await testEnv.EXPORTS.list({ prefix: `${projectId}/` })).objects.length).toBeGreaterThan(0);

    const ts = new Date().toISOString().slice(0, 23).replace('T', ' ');
    const row = (project: string, path: string) => ({ project_id: project, ts, kind: 'pageview', visitor_id: 7, session_id: 7, hostname: goneDomain, path });
    const [onlyGone, mixed] = [unique('gone-only'), unique('mixed')];
    const batch = createMessageBatch('sightline-events', [
      { id: onlyGone, timestamp: new Date(), attempts: 1, body: { table: 'events', rows: [row(goneId, '/gone')] } },
      { id: mixed, timestamp: new Date(), attempts: 1, body: { table: 'events', rows: [row(goneId, '/gone'), row(projectId, '/queued-live')] } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as never, testEnv as never);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages).toEqual([]);
    expect([...result.explicitAcks].sort()).toEqual([onlyGone, mixed].sort());

    const web = createClient({ url: testEnv.CLICKHOUSE_URL });
    const count = async (project: string, path: string) =>
      Number(
        ((await (
          await web.query({
            query: 'SELECT count() AS n FROM events WHERE project_id = {project:String} AND path = {path:String}',
            query_params: { project, path },
            format: 'JSONEachRow',
          })
        ).json()) as { n: string }[])[0]!.n,
      );
    expect(await count(goneId, '/gone')).toBe(0);
    expect(await count(projectId, '/queued-live')).toBe(1);
    await web.close();
  });
});
