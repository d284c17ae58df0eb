import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Redis } from '@upstash/redis';
import { closeHarness, createHarness, listen, listenAsNode, type Harness, type Listening } from '../helpers/harness.js';
import { excludedIpsKey } from '../../src/ingest/state.js';

// `npm start` answers POST /api/event on Node's own objects (src/ingest/node-event-listener.ts);
// the Hono route serves it on Workers and in-process. Both must answer and store the same.

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const octet = () => Math.floor(Math.random() * 254) + 1;
const freshIp = () => `10.${octet()}.${octet()}.${octet()}`;
const EXCLUDED = freshIp();
/** Headers whose values a client sees and both paths must agree on (Date and keep-alive vary). */
const COMPARED = ['access-control-allow-origin', 'x-sightline-dropped', 'content-type', 'retry-after', 'content-length', 'vary'];

let h: Harness;
let hono: Listening;
let node: Listening;
let site: string;
let domain: string;

beforeAll(async () => {
  h = await createHarness({ env: { TRUST_PROXY: '1', INGEST_IP_PER_MIN: '3' } });
  const owner = await h.user('fast');
  domain = h.domain('fast');
  const created = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Fast', domain } });
  site = (await created.json()).id;
  await (h.deps.redis as Redis).sadd(excludedIpsKey(site), EXCLUDED);
  hono = await listen(h.app);
  node = await listenAsNode(h);
});
afterAll(async () => {
  await hono?.close();
  await node?.close();
  await closeHarness();
});

interface Sent {
  path?: string;
  method?: string;
  headers?: Record<string, string>;
  /** A string, or pieces sent as a chunked body (no Content-Length). */
  body?: string | string[];
}

async function send(base: string, req: Sent) {
  const body = Array.isArray(req.body)
    ? new ReadableStream<Uint8Array>({
        start(ctl) {
          for (const piece of req.body as string[]) ctl.enqueue(new TextEncoder().encode(piece));
          ctl.close();
        },
      })
    : req.body;
  const res = await fetch(`${base}${req.path ?? '/api/event'}`, {
    method: req.method ?? 'POST',
    headers: { 'user-agent': CHROME, 'x-forwarded-for': freshIp(), ...req.headers },
    body,
    ...(Array.isArray(req.body) ? { duplex: 'half' } : {}),
  } as RequestInit);
  const headers = Object.fromEntries(COMPARED.map((name) => [name, res.headers.get(name)]));
  return { status: res.status, headers, text: await res.text() };
}

const event = (extra: Record<string, unknown> = {}) => JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/parity`, ...extra });

describe('POST /api/event: the Node fast path answers as the Hono route', () => {
  const cases: [string, () => Sent, number][] = [
    ['a pageview', () => ({ body: event(), headers: { 'content-type': 'application/json' } }), 202],
    ['a text/plain beacon', () => ({ body: event(), headers: { 'content-type': 'text/plain;charset=UTF-8' } }), 202],
    ['a query string on the path', () => ({ path: '/api/event?v=1', body: event() }), 202],
    ['a browser Origin', () => ({ body: event(), headers: { origin: 'https://elsewhere.example' } }), 202],
    ['an unknown site', () => ({ body: JSON.stringify({ site: 'prj_nope', kind: 'pageview', url: `https://${domain}/` }) }), 202],
    ['a foreign host', () => ({ body: event({ url: 'https://evil.example/' }) }), 202],
    ['a crawler', () => ({ body: event(), headers: { 'user-agent': GOOGLEBOT } }), 202],
    ['an excluded IP', () => ({ body: event(), headers: { 'x-forwarded-for': EXCLUDED } }), 202],
    // TRUST_PROXY=1: the rightmost entry is the client; what is left of it, the client wrote.
    ['an excluded IP behind a forged entry', () => ({ body: event(), headers: { 'x-forwarded-for': `${freshIp()}, ${EXCLUDED}` } }), 202],
    ['a forged excluded IP on the left', () => ({ body: event(), headers: { 'x-forwarded-for': `${EXCLUDED}, ${freshIp()}` } }), 202],
    ['a forwarded entry that is no address', () => ({ body: event(), headers: { 'x-forwarded-for': `${freshIp()}, not-an-ip` } }), 202],
    ['non-JSON', () => ({ body: 'not json {' }), 400],
    ['a JSON array', () => ({ body: '[1,2]' }), 400],
    ['an unknown kind', () => ({ body: event({ kind: 'click' }) }), 400],
    ['a data: URL', () => ({ body: event({ url: 'data:text/html,<b>x</b>' }) }), 400],
    ['an amount without currency', () => ({ body: event({ kind: 'transaction', name: 'Order', amountCents: 100 }) }), 400],
    ['a 9 KB body', () => ({ body: event({ props: { pad: 'x'.repeat(900) }, name: 'y'.repeat(9000) }) }), 413],
    ['a 9 KB chunked body', () => ({ body: Array.from({ length: 9 }, (_, i) => (i === 0 ? event().slice(0, -1) + ',"pad":"' : 'x'.repeat(1024))) }), 413],
    ['an empty body', () => ({ body: '' }), 400],
    ['a trailing slash (not the route)', () => ({ path: '/api/event/', body: event() }), 404],
    ['a GET (not the route)', () => ({ method: 'GET' }), 404],
  ];
  it.each(cases)('%s', async (_name, make, status) => {
    const [viaHono, viaNode] = await Promise.all([send(hono.url, make()), send(node.url, make())]);
    expect(viaNode.status).toBe(status);
    expect(viaNode).toEqual(viaHono);
  });

  it('throttles an IP over its limit the same way', async () => {
    // The IP window is a clock minute: a sequence that straddles a minute's turn is sent again.
    const answers = async (base: string) => {
      for (;;) {
        const minute = Math.floor(Date.now() / 60_000);
        const ip = freshIp();
        const out: (string | null)[] = [];
        for (let i = 0; i < 4; i++) out.push((await send(base, { body: event(), headers: { 'x-forwarded-for': ip } })).headers['x-sightline-dropped']);
        if (Math.floor(Date.now() / 60_000) === minute) return out;
      }
    };
    const expected = [null, null, null, 'throttled'];
    expect(await answers(hono.url)).toEqual(expected);
    expect(await answers(node.url)).toEqual(expected);
  });

  it('stores the same row', async () => {
    const ip = freshIp();
    const sent = (path: string) => ({ body: event({ url: `https://${domain}${path}?utm_source=news`, referrer: 'https://www.google.com/' }), headers: { 'x-forwarded-for': ip } });
    expect((await send(hono.url, sent('/via-hono'))).status).toBe(202);
    expect((await send(node.url, sent('/via-node'))).status).toBe(202);
    const rs = await h.deps.clickhouse.query({
      query: `SELECT * EXCEPT (ts, path) FROM events WHERE project_id = {site:String} AND path IN ('/via-hono', '/via-node') ORDER BY path`,
      query_params: { site },
      format: 'JSONEachRow',
    });
    const [fromHono, fromNode] = await rs.json<Record<string, unknown>>();
    expect(fromHono).toMatchObject({ browser: 'Chrome', os: 'Windows', utm_source: 'news', referrer: 'https://www.google.com/' });
    // Same visitor (IP and user agent) within 30 min: same visitor and session ids too.
    expect(fromNode).toEqual(fromHono);
  });

  it('uses the socket address when forwarding headers are not trusted', async () => {
    const plain = await createHarness();
    const server = await listenAsNode(plain);
    try {
      await (h.deps.redis as Redis).sadd(excludedIpsKey(site), '127.0.0.1');
      const res = await send(server.url, { body: event(), headers: { 'x-forwarded-for': '8.8.4.4' } });
      expect(res.headers['x-sightline-dropped']).toBe('excluded-ip');
    } finally {
      await (h.deps.redis as Redis).srem(excludedIpsKey(site), '127.0.0.1');
      await server.close();
    }
  });

  it('lets a client that leaves mid-body go without an error', async () => {
    const logged = vi.spyOn(console, 'error');
    try {
      const { port } = new URL(node.url);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((done) => socket.once('connect', done));
      socket.write(`POST /api/event HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 500\r\n\r\n{"site":`);
      await new Promise((done) => setTimeout(done, 50));
      socket.destroy();
      await new Promise((done) => setTimeout(done, 50));
      expect((await send(node.url, { body: event() })).status).toBe(202);
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });
});
