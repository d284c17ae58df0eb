import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowStore } from '../../src/adapters/row-store.js';
import { createApp } from '../../src/app.js';
import type { Deps } from '../../src/deps.js';
import { createBatcher } from '../../src/ingest/batcher.js';
import { createImportWorkerPool, type ImportParserPool } from '../../src/ingest/import-pool.js';
import { chTimestamp } from '../../src/ingest/insert.js';
import { consumeEvents, queueSink, type EventsMessage } from '../../src/ingest/queue-sink.js';
import type { EventSink } from '../../src/ingest/sink.js';
import { createServices } from '../../src/services.js';
import { closeHarness, createHarness, listenAsNode, unique, type Harness, type Listening, type TestUser } from '../helpers/harness.js';

/*
 * Hostile text on every ingest path, then ordinary traffic, counted exactly. One lone surrogate
 * that reaches a JSONEachRow insert makes ClickHouse refuse the whole batch ("missing second part
 * of surrogate pair"), and the batcher would retry it forever with every later event behind it.
 * Each path here must store the poison as valid text (U+FFFD, controls dropped) and every
 * ordinary event after it.
 */

/** What is sent, and what must be stored for it. */
const POISON: [sent: string, stored: string][] = [
  ['x\ud800', 'x\ufffd'], // a lone high surrogate
  ['\udc00y', '\ufffdy'], // a lone low surrogate
  ['a\u0000b', 'ab'], // NUL
  ['c\u0001\u001fd\te\nf\rg', 'cdefg'], // other C0 controls
  ['\udbff\udbff🚀', '\ufffd\ufffd🚀'], // two high surrogates before a valid pair
];
/** Ordinary events sent after the poison on each path. */
const NORMAL = 200;
/**
 * A flush that has not finished by then is stuck behind a refused batch (a healthy one takes well
 * under a second; the first inserts into a cold engine on a busy two-core host, a few seconds).
 */
const FLUSH_DEADLINE_MS = 30_000;
/** Room for that deadline inside each test. */
const TEST_TIMEOUT = { timeout: 60_000 };

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const GOOGLE_CRAWLER_IP = '66.249.66.1';

/** Raw bytes that are not UTF-8: a stray continuation byte, a truncated pair, an encoded surrogate, an overlong form. */
const BAD = { ff: [0xff], truncated: [0xc3, 0x28], surrogate: [0xed, 0xa0, 0x80], overlong: [0xc0, 0xaf] };
/** Those bytes as a (non-fatal) UTF-8 decoder reads them. */
const BAD_TEXT = { ff: '\ufffd', truncated: '\ufffd(', surrogate: '\ufffd\ufffd\ufffd', overlong: '\ufffd\ufffd' };
/** JSON text with raw bytes spliced in. */
const bytesOf = (...parts: (string | number[] | Uint8Array)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

let h: Harness;
let owner: TestUser;
let sink: EventSink;
let node: Listening;
const batcherLogs: string[] = [];
const pools: ImportParserPool[] = [];

/** Fails instead of hanging when a batch is stuck behind a poison insert. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function rows<T>(query: string, params: Record<string, unknown>): Promise<T[]> {
  const rs = await h.deps.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}
const count = async (table: 'events' | 'bot_hits', projectId: string, where = '1') =>
  Number((await rows<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE project_id = {id:String} AND ${where}`, { id: projectId }))[0]!.n);

const EVENT_TEXT_COLUMNS = [
  'hostname', 'path', 'referrer', 'referrer_source', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'country_code',
  'country_name', 'region', 'city', 'device', 'browser', 'browser_version', 'os', 'os_version', 'event_name', 'currency',
];
const BOT_TEXT_COLUMNS = ['bot_slug', 'bot_name', 'category', 'path', 'user_agent'];

/** Stored strings of a project (every text column, props keys and values) that are not valid UTF-8 or hold a C0 control, as ClickHouse sees them. */
async function invalidStored(table: 'events' | 'bot_hits', projectId: string): Promise<number> {
  const columns = (table === 'events' ? EVENT_TEXT_COLUMNS : BOT_TEXT_COLUMNS).map((c) => `toString(${c})`);
  const maps = table === 'events' ? ', mapKeys(props), mapValues(props)' : '';
  const [row] = await rows<{ n: string; all: string }>(
    `SELECT countIf(NOT isValidUTF8(s) OR match(s, '[\\\\x00-\\\\x1f]')) AS n, count() AS all
     FROM (SELECT arrayJoin(arrayConcat([${columns.join(', ')}]${maps})) AS s FROM ${table} WHERE project_id = {id:String})`,
    { id: projectId },
  );
  // The check saw the strings (a project with no rows would pass it trivially).
  expect(Number(row!.all)).toBeGreaterThan(0);
  return Number(row!.n);
}

async function project(label: string): Promise<{ id: string; domain: string }> {
  const domain = h.domain(label);
  const res = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: label, domain } });
  expect(res.status).toBe(201);
  return { id: (await res.json()).id, domain };
}

/** An app over the harness's Redis and ClickHouse with some deps replaced (another sink, client or parser pool). */
function appWith(overrides: Partial<Deps>) {
  const deps: Deps = { ...h.deps, ...overrides };
  return createApp(deps, createServices(deps));
}

const octet = () => Math.floor(Math.random() * 254) + 1;
const freshIp = () => `10.${octet()}.${octet()}.${octet()}`;

beforeAll(async () => {
  h = await createHarness({
    env: { TRUST_PROXY: '1', INGEST_IP_PER_MIN: '1000000', INGEST_PROJECT_PER_SEC: '1000000' },
    // The production write path on Node: rows batched and inserted as JSONEachRow.
    sink: (deps) => (sink = createBatcher(deps.rowStore, { maxBatchRows: 1000, flushIntervalMs: 1000, retryDelayMs: 30, maxRetryDelayMs: 200, log: (l) => batcherLogs.push(l) })),
  });
  owner = await h.user('poison');
  node = await listenAsNode(h);
});
afterAll(async () => {
  await node?.close();
  await within(20_000, 'closing the batcher', sink.close()).catch(() => {});
  for (const pool of pools) await pool.close();
  await closeHarness();
});

describe('POST /api/event with poison text, then ordinary events', TEST_TIMEOUT, () => {
  /** The poison events of a project: every string field of the body holds one poison value. */
  const poisonEvents = (site: string, domain: string) =>
    POISON.map(([sent], i) => ({
      site,
      kind: 'custom',
      name: `n${i}${sent}`,
      url: `https://${domain}/poison/${i}?utm_source=s${i}${sent}&utm_campaign=u%00v%ED%A0%80w%01`,
      referrer: `https://ref${i}.example/${sent}`,
      props: { [`k${sent}`]: `v${sent}`, [sent]: true, n: 1 },
      visitorId: `visitor${sent}`,
    }));
  /** Raw bytes that are not UTF-8 inside the name and a props key and value. */
  const rawBody = (site: string, domain: string) =>
    bytesOf(
      `{"site":"${site}","kind":"custom","name":"raw`, BAD.ff, BAD.truncated, BAD.surrogate, `!","url":"https://${domain}/raw",`,
      `"props":{"k`, BAD.ff, `":"v`, BAD.overlong, `"}}`,
    );

  async function checkStored(p: { id: string; domain: string }) {
    await within(FLUSH_DEADLINE_MS, 'flushing the batcher', h.deps.sink.flush());
    // Every poison event, the raw-bytes one, the crawler and every ordinary event: nothing refused, nothing lost.
    expect(await count('events', p.id)).toBe(POISON.length + 1 + NORMAL);
    expect(await count('events', p.id, "path LIKE '/normal/%'")).toBe(NORMAL);
    expect(await count('bot_hits', p.id)).toBe(1);
    const stored = await rows<Record<string, unknown>>(
      "SELECT path, event_name, referrer, referrer_source, utm_source, utm_campaign, props FROM events WHERE project_id = {id:String} AND path LIKE '/poison/%' ORDER BY path",
      { id: p.id },
    );
    expect(stored).toEqual(
      POISON.map(([, text], i) => ({
        path: `/poison/${i}`,
        event_name: `n${i}${text}`,
        referrer: `https://ref${i}.example/${text}`,
        referrer_source: `ref${i}.example`,
        utm_source: `s${i}${text}`,
        utm_campaign: 'uv\ufffd\ufffd\ufffdw',
        props: { [`k${text}`]: `v${text}`, [text]: 'true', n: '1' },
      })),
    );
    const [raw] = await rows<Record<string, unknown>>("SELECT event_name, props FROM events WHERE project_id = {id:String} AND path = '/raw'", { id: p.id });
    expect(raw).toEqual({ event_name: `raw${BAD_TEXT.ff}${BAD_TEXT.truncated}${BAD_TEXT.surrogate}!`, props: { [`k${BAD_TEXT.ff}`]: `v${BAD_TEXT.overlong}` } });
    // A tab is the one control a header may carry; it is dropped from the stored user agent.
    expect(await rows('SELECT user_agent FROM bot_hits WHERE project_id = {id:String}', { id: p.id })).toEqual([{ user_agent: GOOGLEBOT.replace(' +', '+') }]);
    expect(await invalidStored('events', p.id)).toBe(0);
    expect(await invalidStored('bot_hits', p.id)).toBe(0);
    expect(batcherLogs.filter((l) => /failed/.test(l))).toEqual([]);
  }

  /** Every poison event, a raw-bytes body and a crawler through `post`, then NORMAL ordinary events; checks what was stored. */
  const sendPoisonThenOrdinary = async (p: Awaited<ReturnType<typeof project>>, post: (body: BodyInit, ua?: string) => Promise<Response>) => {
    for (const e of poisonEvents(p.id, p.domain)) {
      const res = await post(JSON.stringify(e));
      expect([res.status, res.headers.get('x-sightline-dropped')]).toEqual([202, null]);
    }
    const raw = await post(rawBody(p.id, p.domain));
    expect([raw.status, raw.headers.get('x-sightline-dropped')]).toEqual([202, null]);
    const bot = await post(JSON.stringify({ site: p.id, kind: 'pageview', url: `https://${p.domain}/crawled` }), GOOGLEBOT.replace(' +', '\t+'));
    expect([bot.status, bot.headers.get('x-sightline-dropped')]).toEqual([202, 'bot']);
    const answers = await Promise.all(
      Array.from({ length: NORMAL }, (_, j) => post(JSON.stringify({ site: p.id, kind: 'pageview', url: `https://${p.domain}/normal/${j}` })).then((r) => r.status)),
    );
    expect(answers.filter((s) => s === 202)).toHaveLength(NORMAL);
    await checkStored(p);
  };

  it('through the Hono app (the Workers route): every poison event stored as valid text, every ordinary event counted', async () => {
    const p = await project('poison-hono');
    const post = async (body: BodyInit, ua = CHROME) =>
      h.app.request('/api/event', { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': ua, 'x-forwarded-for': freshIp() }, body });
    await sendPoisonThenOrdinary(p, post);
  });

  it('through the Node fast path (npm start): the same', async () => {
    const p = await project('poison-node');
    const post = async (body: BodyInit, ua = CHROME) => {
      const res = await fetch(`${node.url}/api/event`, { method: 'POST', headers: { 'content-type': 'text/plain', 'user-agent': ua, 'x-forwarded-for': freshIp() }, body });
      await res.arrayBuffer();
      return res;
    };
    await sendPoisonThenOrdinary(p, post);
  });
});

describe('POST …/hits with poison text, then ordinary hits', TEST_TIMEOUT, () => {
  it('stores poison paths, user agents and referrers as valid text, and every ordinary hit', async () => {
    const p = await project('poison-hits');
    const poison = POISON.flatMap(([sent], i) => [
      { path: `/h/${i}/${sent}`, userAgent: `${FIREFOX} ${sent}`, ip: '8.8.8.8', referrer: `https://ref${i}.example/${sent}` },
      { path: `/b/${i}/${sent}`, userAgent: `${GOOGLEBOT} ${sent}`, ip: GOOGLE_CRAWLER_IP, status: 200 },
    ]);
    const normal = Array.from({ length: NORMAL }, (_, j) => ({ path: `/normal/${j}`, userAgent: FIREFOX, ip: '8.8.4.4' }));
    const body = JSON.stringify([...poison, ...normal]);
    // And one hit whose path and user agent hold raw bytes that are not UTF-8.
    const withRaw = bytesOf(body.slice(0, -1), ',{"path":"/raw', BAD.surrogate, '","userAgent":"', GOOGLEBOT, BAD.ff, `","ip":"${GOOGLE_CRAWLER_IP}"}]`);
    const res = await h.app.request(`/api/v1/projects/${p.domain}/hits`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.writeKey}`, 'Content-Type': 'application/json' },
      body: withRaw,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: POISON.length + NORMAL, bots: POISON.length + 1, rejected: 0, errors: [] });

    await within(FLUSH_DEADLINE_MS, 'flushing the batcher', h.deps.sink.flush());
    expect(await count('events', p.id)).toBe(POISON.length + NORMAL);
    expect(await count('events', p.id, "path LIKE '/normal/%'")).toBe(NORMAL);
    expect(await count('bot_hits', p.id)).toBe(POISON.length + 1);
    expect(await rows("SELECT referrer FROM events WHERE project_id = {id:String} AND path LIKE '/h/%' ORDER BY path", { id: p.id })).toEqual(
      POISON.map(([, text], i) => ({ referrer: `https://ref${i}.example/${text}` })),
    );
    expect(await rows('SELECT path, user_agent FROM bot_hits WHERE project_id = {id:String} ORDER BY path', { id: p.id })).toEqual([
      ...POISON.map(([, text], i) => ({ path: `/b/${i}/${text}`, user_agent: `${GOOGLEBOT} ${text}` })),
      { path: `/raw${BAD_TEXT.surrogate}`, user_agent: `${GOOGLEBOT}${BAD_TEXT.ff}` },
    ]);
    expect(await invalidStored('events', p.id)).toBe(0);
    expect(await invalidStored('bot_hits', p.id)).toBe(0);
    expect(batcherLogs.filter((l) => /failed/.test(l))).toEqual([]);
  });
});

describe('POST …/import with poison text, then ordinary lines', TEST_TIMEOUT, () => {
  const at = () => new Date(Date.now() - 3_600_000).toISOString();
  /** Poison in every string field of a line, one line per value; then a line of raw bytes; then ordinary lines. */
  const importBody = (domain: string) => {
    const poison = POISON.map(([sent], i) =>
      JSON.stringify({
        timestamp: at(),
        kind: 'custom',
        visitorId: `v${sent}`,
        sessionId: `s${sent}`,
        url: `https://${domain}/poison/${i}?utm_source=s${i}${sent}`,
        referrer: `https://ref${i}.example/${sent}`,
        name: `n${i}${sent}`,
        props: { [`k${sent}`]: `v${sent}`, [sent]: 2 },
        region: `r${sent}`,
        city: `c${sent}`,
        browser: `b${sent}`,
        os: `o${sent}`,
        device: `d${sent}`,
      }),
    );
    const normal = Array.from({ length: NORMAL }, (_, j) => JSON.stringify({ timestamp: at(), kind: 'pageview', visitorId: `v${j}`, sessionId: `s${j}`, url: `https://${domain}/normal/${j}` }));
    const raw = bytesOf(`{"timestamp":"${at()}","kind":"custom","visitorId":"v`, BAD.ff, `","sessionId":"s","url":"https://${domain}/raw","name":"raw`, BAD.surrogate, `","city":"c`, BAD.overlong, '"}');
    return bytesOf(poison.join('\n'), '\n', raw, '\n', normal.join('\n'), '\n');
  };

  async function importInto(app: ReturnType<typeof createApp>, label: string) {
    const p = await project(label);
    const res = await app.request(`/api/v1/projects/${p.domain}/import`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.writeKey}`, 'Content-Type': 'application/x-ndjson', 'X-Import-Batch-Id': unique('b') },
      body: importBody(p.domain),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ imported: POISON.length + 1 + NORMAL, rejected: 0, errors: [] });
    expect(await count('events', p.id)).toBe(POISON.length + 1 + NORMAL);
    expect(await count('events', p.id, "path LIKE '/normal/%'")).toBe(NORMAL);
    expect(
      await rows(
        "SELECT event_name, referrer, utm_source, props, region, city, browser, os, device FROM events WHERE project_id = {id:String} AND path LIKE '/poison/%' ORDER BY path",
        { id: p.id },
      ),
    ).toEqual(
      POISON.map(([, text], i) => ({
        event_name: `n${i}${text}`,
        referrer: `https://ref${i}.example/${text}`,
        utm_source: `s${i}${text}`,
        props: { [`k${text}`]: `v${text}`, [text]: '2' },
        region: `r${text}`,
        city: `c${text}`,
        browser: `b${text}`,
        os: `o${text}`,
        device: `d${text}`,
      })),
    );
    expect(await rows("SELECT event_name, city FROM events WHERE project_id = {id:String} AND path = '/raw'", { id: p.id })).toEqual([
      { event_name: `raw${BAD_TEXT.surrogate}`, city: `c${BAD_TEXT.overlong}` },
    ]);
    expect(await invalidStored('events', p.id)).toBe(0);
  }

  it('as RowBinary (the embedded engine), parsed in the request thread', async () => {
    await importInto(h.app, 'poison-import-rb');
  });

  it('as RowBinary, parsed by an import worker thread', async () => {
    const pool = createImportWorkerPool(1);
    pools.push(pool);
    await importInto(appWith({ importParsers: pool }), 'poison-import-worker');
  });

  it('as JSONEachRow (what a ClickHouse server is sent)', async () => {
    // The same embedded engine, minus the RowBinary capability: the import then encodes JSON lines.
    const jsonOnly: RowStore = { ...h.deps.rowStore, rowBinaryTypes: undefined };
    await importInto(appWith({ rowStore: jsonOnly }), 'poison-import-json');
  });
});

describe('Workers queue consumer with poison text, then ordinary rows', TEST_TIMEOUT, () => {
  type Message = MessageBatch<EventsMessage>['messages'][number];

  /** A queue batch as the Workers runtime hands it to `queue()`, recording acks and retries. */
  function batchOf(bodies: EventsMessage[]) {
    const acked: string[] = [];
    const retried: string[] = [];
    const messages = bodies.map((body) => {
      const id = unique('msg');
      return { id, timestamp: new Date(), attempts: 1, body, ack: () => acked.push(id), retry: () => retried.push(id) } as unknown as Message;
    });
    const batch = { queue: 'sightline-events', messages, ackAll() {}, retryAll() {} } as unknown as MessageBatch<EventsMessage>;
    return { batch, acked, retried };
  }

  it('inserts rows the Worker enqueued for poison events (the producer side made them valid)', async () => {
    const p = await project('poison-queue-producer');
    const enqueued: EventsMessage[] = [];
    const queue = {
      send: async (body: EventsMessage) => void enqueued.push(body),
      sendBatch: async (messages: { body: EventsMessage }[]) => void enqueued.push(...messages.map((m) => m.body)),
    } as unknown as Queue<EventsMessage>;
    const worker = appWith({ sink: queueSink(queue) });
    const post = (body: unknown, ua = CHROME) =>
      worker.request('/api/event', { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': ua, 'x-forwarded-for': freshIp() }, body: JSON.stringify(body) });
    for (const [sent] of POISON) {
      expect((await post({ site: p.id, kind: 'custom', name: `n${sent}`, url: `https://${p.domain}/poison`, referrer: `https://r.example/${sent}`, props: { [sent]: sent } })).status).toBe(202);
    }
    for (let j = 0; j < NORMAL; j++) expect((await post({ site: p.id, kind: 'pageview', url: `https://${p.domain}/normal/${j}` })).status).toBe(202);

    const { batch, acked, retried } = batchOf(enqueued);
    await consumeEvents(batch, h.deps.rowStore);
    expect(retried).toEqual([]);
    expect(acked).toHaveLength(enqueued.length);
    expect(await count('events', p.id)).toBe(POISON.length + NORMAL);
    expect(await count('events', p.id, "path LIKE '/normal/%'")).toBe(NORMAL);
    expect(await rows("SELECT event_name FROM events WHERE project_id = {id:String} AND path = '/poison' ORDER BY event_name", { id: p.id })).toEqual(
      POISON.map(([, text]) => ({ event_name: `n${text}` })).sort((a, b) => Buffer.compare(Buffer.from(a.event_name), Buffer.from(b.event_name))),
    );
    expect(await invalidStored('events', p.id)).toBe(0);
  });

  it('inserts messages whose rows hold poison text as written (another deploy), and every ordinary row next to them', async () => {
    const p = await project('poison-queue-raw');
    const ts = chTimestamp(Date.now());
    const eventBase = { project_id: p.id, ts, visitor_id: '12345', session_id: '67890', hostname: p.domain };
    const poisonEvents = POISON.map(([sent], i) => ({
      ...eventBase,
      kind: 'custom',
      path: `/poison/${i}`,
      referrer: `https://ref${i}.example/${sent}`,
      referrer_source: `ref${i}.example`,
      event_name: `n${i}${sent}`,
      props: { [`k${sent}`]: `v${sent}` },
      city: `c${sent}`,
    }));
    const poisonBots = POISON.map(([sent], i) => ({
      project_id: p.id, ts, bot_slug: 'googlebot', bot_name: 'Googlebot', category: 'indexing', verified: 1, path: `/b/${i}/${sent}`, status: 200, user_agent: `${GOOGLEBOT}${sent}`,
    }));
    const normal = Array.from({ length: NORMAL }, (_, j) => ({ ...eventBase, kind: 'pageview', path: `/normal/${j}` }));
    // Poison between ordinary messages of both tables, in one batch.
    const bodies: EventsMessage[] = [
      { table: 'events', rows: normal.slice(0, 100) },
      { table: 'events', rows: poisonEvents },
      { table: 'bot_hits', rows: poisonBots },
      { table: 'events', rows: normal.slice(100) },
    ];
    const { batch, acked, retried } = batchOf(bodies);
    await consumeEvents(batch, h.deps.rowStore);
    expect(retried).toEqual([]);
    expect(acked).toHaveLength(bodies.length);
    expect(await count('events', p.id)).toBe(POISON.length + NORMAL);
    expect(await count('events', p.id, "path LIKE '/normal/%'")).toBe(NORMAL);
    expect(await count('bot_hits', p.id)).toBe(POISON.length);
    expect(await rows("SELECT event_name, referrer, props, city FROM events WHERE project_id = {id:String} AND path LIKE '/poison/%' ORDER BY path", { id: p.id })).toEqual(
      POISON.map(([, text], i) => ({ event_name: `n${i}${text}`, referrer: `https://ref${i}.example/${text}`, props: { [`k${text}`]: `v${text}` }, city: `c${text}` })),
    );
    expect(await rows('SELECT path, user_agent FROM bot_hits WHERE project_id = {id:String} ORDER BY path', { id: p.id })).toEqual(
      POISON.map(([, text], i) => ({ path: `/b/${i}/${text}`, user_agent: `${GOOGLEBOT}${text}` })),
    );
    expect(await invalidStored('events', p.id)).toBe(0);
    expect(await invalidStored('bot_hits', p.id)).toBe(0);
  });
});
