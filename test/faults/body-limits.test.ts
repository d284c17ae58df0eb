import { createServer, request as httpRequest, type RequestListener } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { withEventFastPath } from '../../src/ingest/node-event-listener.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMITS } from '../../src/app.js';
import { bodyLimitLookup } from '../../src/http/body-limit.js';
import { closeHarness, createHarness, listen, listenAsNode, type Harness, type Listening, type TestUser } from '../helpers/harness.js';
import { newProject } from '../helpers/report-fixtures.js';

/**
 * Every route that takes a body refuses one over its limit with `413 {error}` naming the limit,
 * over real HTTP, whether the length is declared or the body is chunked; a body at the limit is
 * read. The routes come from /openapi.json, so a new route is covered without touching this file.
 * A 50 MB upload is answered while the client is still sending, and the server stops reading.
 */

type Operation = { security?: Record<string, string[]>[]; requestBody?: { content?: Record<string, unknown> }; responses: Record<string, unknown> };
type Doc = { paths: Record<string, Record<string, Operation>> };

const BODY_METHODS = ['post', 'put', 'patch', 'delete'];
const MB = 1024 * 1024;
const limitOf = bodyLimitLookup(BODY_LIMITS);

let h: Harness;
let hono: Listening;
let node: Listening;
let alice: TestUser;
let site: { domain: string; id: string };
/** Whose credentials and project the route sweep uses: it may log out or delete them. */
let probe: TestUser;
let probeSite: { domain: string; id: string };
let doc: Doc;

beforeAll(async () => {
  h = await createHarness();
  alice = await h.user('limits');
  site = await newProject(h, alice);
  probe = await h.user('probe');
  probeSite = await newProject(h, probe);
  hono = await listen(h.app);
  node = await listenAsNode(h);
  doc = (await (await fetch(`${hono.url}/openapi.json`)).json()) as Doc;
});
afterAll(async () => {
  await hono?.close();
  await node?.close();
  await closeHarness();
});

interface Route {
  method: string;
  docPath: string;
  path: string;
  limit: number | 'stream';
  form: boolean;
  token?: string;
}

/** Every operation of the document that takes a body, with the probe's project in its path. */
function bodyRoutes(): Route[] {
  const out: Route[] = [];
  for (const [docPath, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      if (!BODY_METHODS.includes(method)) continue;
      const path = docPath.replace('{domain}', probeSite.domain).replace(/\{[^}]+\}/g, 'x1');
      const limit = limitOf(method, path);
      if (limit === null) throw new Error(`${method} ${docPath}: no body limit`);
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      const token = schemes.length === 0 ? undefined : schemes.includes('bearerApiKey') ? probe.writeKey : probe.session;
      const form = Object.keys(op.requestBody?.content ?? {}).includes('application/x-www-form-urlencoded');
      out.push({ method: method.toUpperCase(), docPath, path, limit, form, token });
    }
  }
  return out;
}

/** A well-formed body of exactly `bytes` bytes (a JSON object or a form with one padded field). */
function bodyOf(bytes: number, form: boolean): string {
  const head = form ? 'pad=' : '{"pad":"';
  const tail = form ? '' : '"}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}

/** Sends `body` with a Content-Length, or as chunks of 16 KB without one. */
async function send(base: string, route: Route, body: string, chunked: boolean) {
  const headers: Record<string, string> = { 'content-type': route.form ? 'application/x-www-form-urlencoded' : 'application/json' };
  if (route.token) headers.authorization = `Bearer ${route.token}`;
  const bytes = new TextEncoder().encode(body);
  const stream = new ReadableStream<Uint8Array>({
    start(ctl) {
      for (let i = 0; i < bytes.byteLength; i += 16 * 1024) ctl.enqueue(bytes.subarray(i, i + 16 * 1024));
      ctl.close();
    },
  });
  const res = await fetch(`${base}${route.path}`, {
    method: route.method,
    headers,
    body: chunked ? stream : body,
    redirect: 'manual',
    ...(chunked ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, text };
}

describe('every body-taking route of /openapi.json has a byte limit', () => {
  it('the document lists them, each limited route with its 413', () => {
    const routes = bodyRoutes();
    // Projects, goals, funnels, schedules, members, keys, auth, OAuth, MCP, ingestion…
    expect(routes.length).toBeGreaterThan(20);
    for (const r of routes) {
      if (r.limit === 'stream') continue;
      const documented = doc.paths[r.docPath]![r.method.toLowerCase()]!.responses['413'];
      expect(documented, `${r.method} ${r.docPath} does not document its 413`).toBeDefined();
    }
    // Only the import streams; /api/event and hits have their own limits.
    expect(routes.filter((r) => r.limit === 'stream').map((r) => r.docPath)).toEqual(['/api/v1/projects/{domain}/import']);
    expect(limitOf('POST', '/api/event')).toBe(8 * 1024);
    expect(limitOf('POST', '/oauth/token')).toBe(64 * 1024);
  });

  it('one byte over the limit → 413 {error} naming it, declared or chunked; at the limit → read (not 413)', async () => {
    const checked: string[] = [];
    for (const route of bodyRoutes()) {
      if (route.limit === 'stream') continue;
      const limit = route.limit;
      for (const chunked of [false, true]) {
        const how = `${route.method} ${route.docPath} (${chunked ? 'chunked' : 'Content-Length'})`;
        const over = await send(hono.url, route, bodyOf(limit + 1, route.form), chunked);
        expect(over.status, `${how}: ${over.text.slice(0, 200)}`).toBe(413);
        expect(JSON.parse(over.text), how).toEqual({ error: expect.stringContaining(`at most ${limit} bytes`) });
        const at = await send(hono.url, route, bodyOf(limit, route.form), chunked);
        expect(at.status, `${how} at the limit: ${at.text.slice(0, 200)}`).not.toBe(413);
        expect(at.status, `${how} at the limit: ${at.text.slice(0, 200)}`).toBeLessThan(500);
      }
      checked.push(route.docPath);
    }
    expect(checked).toContain('/oauth/token');
    expect(checked).toContain('/mcp');
  }, 120_000);

  it('POST /api/event on the Node fast path: the same limit and answer', async () => {
    const route: Route = { method: 'POST', docPath: '/api/event', path: '/api/event', limit: 8192, form: false };
    for (const chunked of [false, true]) {
      const [viaHono, viaNode] = await Promise.all([
        send(hono.url, route, bodyOf(8193, false), chunked),
        send(node.url, route, bodyOf(8193, false), chunked),
      ]);
      expect(viaNode).toEqual(viaHono);
      expect(viaNode.status).toBe(413);
      expect((await send(node.url, route, bodyOf(8192, false), chunked)).status).toBe(400);
    }
  });
});

/** A server on a random port that can tell how many bytes it read from its clients. */
interface Counting {
  url: string;
  bytesRead(): number;
  close(): Promise<void>;
}

async function serveCounting(listener: RequestListener): Promise<Counting> {
  const server = createServer(listener);
  const sockets: Socket[] = [];
  server.on('connection', (s) => sockets.push(s));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytesRead: () => sockets.reduce((sum, s) => sum + s.bytesRead, 0),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((done) => server.close(() => done()));
    },
  };
}

interface Upload {
  status: number;
  body: string;
  /** Bytes the client had handed to the socket when the answer arrived. */
  sentAtAnswer: number;
  /** Bytes handed to the socket in all before the server closed the connection. */
  sentInAll: number;
  /** From the answer's end to the connection's close, in ms. */
  closedAfterMs: number;
}

/**
 * Uploads `total` bytes in 64 KB writes, with a Content-Length or chunked, and keeps writing
 * after the answer until the server closes the connection (or everything is sent).
 */
function upload(base: string, path: string, total: number, opts: { chunked: boolean; contentType: string }): Promise<Upload> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': opts.contentType };
    if (!opts.chunked) headers['content-length'] = total;
    const req = httpRequest(`${base}${path}`, { method: 'POST', headers });
    const piece = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    let answer: { status: number; body: string; sentAtAnswer: number; at: number } | null = null;
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      if (answer) resolve({ status: answer.status, body: answer.body, sentAtAnswer: answer.sentAtAnswer, sentInAll: sent, closedAfterMs: Date.now() - answer.at });
      else reject(new Error(`connection closed after ${sent} bytes without an answer`));
    };
    req.on('response', (res) => {
      const sentAtAnswer = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        answer = { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), sentAtAnswer, at: Date.now() };
        // Wait for the server to close (it should, without reading the rest); give up after 5 s.
        setTimeout(finish, 5000).unref();
      });
    });
    req.on('error', finish);
    req.on('close', finish);
    const pump = () => {
      while (!closed && sent < total) {
        const n = Math.min(piece.byteLength, total - sent);
        sent += n;
        if (!req.write(n === piece.byteLength ? piece : piece.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!closed && sent >= total) req.end();
    };
    pump();
  });
}

describe('a 50 MB upload is refused while it is being sent', () => {
  const TOTAL = 50 * MB;
  let viaHono: Counting;
  let viaNode: Counting;
  beforeAll(async () => {
    viaHono = await serveCounting(getRequestListener(h.app.fetch));
    viaNode = await serveCounting(withEventFastPath(h.services, getRequestListener(h.app.fetch)));
  });
  afterAll(async () => {
    await viaHono?.close();
    await viaNode?.close();
  });
  const cases: [string, () => Counting, string, string][] = [
    ['POST /oauth/token (Hono)', () => viaHono, '/oauth/token', 'application/x-www-form-urlencoded'],
    ['POST /api/auth/login (Hono)', () => viaHono, '/api/auth/login', 'application/json'],
    ['POST /api/event (Hono)', () => viaHono, '/api/event', 'application/json'],
    ['POST /api/event (Node fast path)', () => viaNode, '/api/event', 'application/json'],
    ['POST /mcp (Hono)', () => viaHono, '/mcp', 'application/json'],
  ];
  for (const chunked of [false, true]) {
    it.each(cases)(`%s, ${chunked ? 'chunked' : 'with Content-Length'}`, async (_name, server, path, contentType) => {
      const readBefore = server().bytesRead();
      const rssBefore = process.memoryUsage().rss;
      const res = await upload(server().url, path, TOTAL, { chunked, contentType });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toEqual({ error: expect.stringMatching(/^Body must be at most \d+ bytes/) });
      // Answered long before the client was done (what it had sent sat in socket buffers)…
      expect(res.sentAtAnswer).toBeLessThan(TOTAL / 4);
      expect(res.sentInAll).toBeLessThan(TOTAL);
      // …and the server closed the connection at once instead of reading the rest.
      expect(res.closedAfterMs).toBeLessThan(1000);
      expect(server().bytesRead() - readBefore).toBeLessThan(8 * MB);
      // Client and server share this process: neither held the upload.
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(30 * MB);
    }, 30_000);
  }
});

describe('the import streams any size, with a per-line limit', () => {
  it('a 256 MB line is that line\'s error, read without being held; the lines around it are imported', async () => {
    const line = (i: number) =>
      `${JSON.stringify({ timestamp: new Date().toISOString(), kind: 'pageview', visitorId: `v${i}`, sessionId: `s${i}`, url: `https://${site.domain}/imported-${i}` })}\n`;
    const piece = Buffer.alloc(1 << 20, 0x61);
    const LINE_MB = 256;
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    // Node's own client, writing one reused buffer as the server takes it: only the server can hold bytes.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${hono.url}/api/v1/projects/${site.domain}/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice.writeKey}`, 'content-type': 'application/x-ndjson' },
      });
      req.on('response', (res) => {
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.write(line(1));
      let left = LINE_MB;
      const pump = () => {
        while (left > 0) {
          left--;
          rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
          if (!req.write(piece)) return void req.once('drain', pump);
        }
        req.end(`\n${line(2)}`);
      };
      pump();
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ imported: 2, rejected: 1, errors: [{ line: 2, error: 'line is longer than 65536 characters' }] });
    // Held whole, the line would take 256 MB (twice that as a string); streamed, the process grows
    // by the same ~60 MB of reading churn whether the line is 50 or 400 MB.
    expect(rssPeak - rssBefore).toBeLessThan((LINE_MB / 2) * MB);
  }, 60_000);
});
