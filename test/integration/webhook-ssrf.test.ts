import { Resolver } from 'node:dns/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { createApp, type App } from '../../src/app.js';
import type { Deps } from '../../src/deps.js';
import { DUE_KEY } from '../../src/export/schedule-store.js';
import { nodeExportStore } from '../../src/jobs/node-export-store.js';
import { nodeWebhookFetch } from '../../src/jobs/node-webhook-fetch.js';
import { runDueExport } from '../../src/jobs/scheduled-exports.js';
import { deliverWebhook, type Fetch } from '../../src/jobs/webhook.js';
import { nodeHostResolver } from '../../src/net/node-host-resolver.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

// Far from other tests' schedules (Redis db 9 is shared); this file runs only its own schedule (runDueExport).
const T0 = Date.parse('2031-04-07T10:00:00Z');
const clock = fixedClock(T0);
/** A public address the test never connects to (the refusals happen before any connection). */
const PUBLIC_IP = '93.184.215.14';

let h: Harness;
let app: App;
let deps: Deps;
let dns: TestDnsServer;
let owner: TestUser;
let domain: string;
let projectId: string;
let exportsDir: string;
let hook: Server;
let hookPort: number;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
/** Every request the job tried to send, with the address it was told to connect to. */
const attempts: { url: string; address: string | null | undefined }[] = [];
/** Would deliver to the local hook server if the check let it through. */
const toLocalHook: Fetch = (url, init, address) => {
  attempts.push({ url, address });
  return fetch(`http://127.0.0.1:${hookPort}/`, init);
};

const put = (webhookUrl: string | null) =>
  Promise.resolve(
    app.request(`/api/v1/projects/${domain}/export/schedule`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${owner.writeKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ frequency: 'daily', period: '7d', webhookUrl }),
    }),
  );
const host = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}.hooks.test`;

beforeAll(async () => {
  dns = await startDnsServer();
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([dns.address]);
  h = await createHarness({ clock });
  expect(h.deps.config.WEBHOOK_ALLOW_PRIVATE).toBe(false);
  exportsDir = mkdtempSync(join(tmpdir(), 'sightline-ssrf-'));
  deps = { ...h.deps, exportStore: nodeExportStore(exportsDir), webhookResolver: nodeHostResolver(resolver) };
  app = createApp(deps);
  owner = await h.user('ssrf');
  domain = h.domain('ssrf');
  const res = await app.request('/api/v1/projects', {
    method: 'POST',
    headers: { Authorization: `Bearer ${owner.writeKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'SSRF', domain }),
  });
  expect(res.status).toBe(201);
  projectId = ((await res.json()) as { id: string }).id;
  hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  hookPort = (hook.address() as { port: number }).port;
});

afterAll(async () => {
  if (projectId) await h.deps.redis.zrem(DUE_KEY, projectId);
  if (hook) await new Promise<void>((r) => hook.close(() => r()));
  await dns?.close();
  rmSync(exportsDir, { recursive: true, force: true });
  await closeHarness();
});

describe('PUT …/export/schedule refuses non-public webhook hosts', () => {
  it('refuses IP literals of every non-public kind with a 400 naming webhookUrl', async () => {
    const literals = [
      'https://127.0.0.1/h',
      'https://2130706433/h',
      'https://[::1]/h',
      'https://[::ffff:127.0.0.1]/h',
      'https://[::ffff:a9fe:a9fe]/h',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.5/h',
      'https://172.20.1.1/h',
      'https://192.168.0.10/h',
      'https://100.64.1.1/h',
      'https://224.0.0.251/h',
      'https://0.0.0.0/h',
      'https://[::]/h',
      'https://[fd00::1]/h',
      'https://[fe80::1]/h',
      'https://[64:ff9b::a00:1]/h',
      'https://[2002:c0a8:1::1]/h',
      'https://localhost:8443/h',
    ];
    for (const url of literals) {
      const res = await put(url);
      expect(res.status, url).toBe(400);
      expect(((await res.json()) as { error: string }).error, url).toMatch(/^webhookUrl must point to a public address: .+ is a (loopback|private|link-local|cgnat|multicast|unspecified) address$/);
    }
    expect((await app.request(`/api/v1/projects/${domain}/export/schedule`, { headers: { Authorization: `Bearer ${owner.writeKey}` } })).status).toBe(404);
  });

  it('refuses names that resolve to a private address, even when another address is public', async () => {
    const cases: [string, string[], string][] = [
      [host('metadata'), ['169.254.169.254'], 'link-local'],
      [host('internal'), ['10.1.2.3'], 'private'],
      [host('mixed'), [PUBLIC_IP, '127.0.0.1'], 'loopback'],
      [host('cgnat'), ['100.100.100.100'], 'cgnat'],
    ];
    for (const [name, addresses, cls] of cases) {
      dns.records.a.set(name, addresses);
      const res = await put(`https://${name}/hook`);
      expect(res.status, name).toBe(400);
      expect(await res.json()).toEqual({ error: `webhookUrl must point to a public address: ${name} resolves to a ${cls} address` });
    }
  });

  it('refuses a host that does not resolve', async () => {
    const name = host('nowhere');
    const res = await put(`https://${name}/hook`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: `webhookUrl host ${name} could not be resolved` });
    // A DNS server that answers too late (the resolver gives up after 1 s): refused too, not accepted unchecked.
    const slow = host('slow');
    dns.records.a.set(slow, [PUBLIC_IP]);
    dns.delayMs = 1500;
    try {
      const late = await put(`https://${slow}/hook`);
      expect(late.status).toBe(400);
      expect(await late.json()).toEqual({ error: `webhookUrl host ${slow} could not be resolved` });
    } finally {
      dns.delayMs = 0;
    }
  });

  it('accepts a name that resolves to public addresses only', async () => {
    const name = host('public');
    dns.records.a.set(name, [PUBLIC_IP]);
    const res = await put(`https://${name}/hook`);
    expect(res.status, await res.clone().text()).toBe(201);
    expect(dns.questions).toContain(`A ${name}`);
  });
});

describe('send time', () => {
  it('does not deliver to a stored host that now resolves privately, and records the refusal', async () => {
    const name = host('rebind');
    dns.records.a.set(name, [PUBLIC_IP]);
    expect((await put(`https://${name}/hook`)).status).toBe(200);
    // After the PUT the name moves to the metadata address (or any private one).
    dns.records.a.set(name, ['169.254.169.254']);
    clock.set(Date.parse('2031-04-08T00:05:00Z'));
    const run = await runDueExport(deps, projectId, clock.now(), { fetch: toLocalHook });
    expect(run).not.toBeNull();
    const ours = [run!];
    const refusal = `refused: webhookUrl must point to a public address: ${name} resolves to a link-local address`;
    expect(ours[0].webhook).toEqual({ error: refusal });
    // The export itself was written; nothing was sent anywhere.
    expect(ours[0].file).toBe(`sightline-${domain}-7d-2031-04-08.csv`);
    expect(attempts).toEqual([]);
    expect(received).toEqual([]);
    const view = await app.request(`/api/v1/projects/${domain}/export/schedule`, { headers: { Authorization: `Bearer ${owner.writeKey}` } });
    expect(await view.json()).toMatchObject({ lastFile: ours[0].file, lastWebhook: { error: refusal } });
  });

  it('connects to the address it checked, not to what the name resolves to next (DNS rebinding)', async () => {
    // First answer public (the check), then loopback: the request must go to the first one.
    const answers = [[PUBLIC_IP], ['127.0.0.1']];
    const resolve = async () => answers.shift() ?? ['127.0.0.1'];
    const sent: (string | null | undefined)[] = [];
    const capture: Fetch = async (_url, _init, address) => {
      sent.push(address);
      return { status: 202 };
    };
    const result = await deliverWebhook('https://rebind.hooks.test/x', 'whsec_test', { a: 1 }, { policy: { allowPrivate: false, resolve }, fetch: capture });
    expect(result).toEqual({ status: 202 });
    expect(sent).toEqual([PUBLIC_IP]);
  });

  it('the Node sender connects to the pinned address and keeps the URL host', async () => {
    // No DNS knows this name: only the pinned address can make the request arrive.
    const url = `http://pinned.invalid:${hookPort}/hook`;
    const before = received.length;
    const result = await nodeWebhookFetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"x":1}', signal: AbortSignal.timeout(5000) }, '127.0.0.1');
    expect(result.status).toBe(204);
    expect(received.slice(before)).toHaveLength(1);
    expect(received[before].headers.host).toBe(`pinned.invalid:${hookPort}`);
    expect(received[before].body).toBe('{"x":1}');
    await expect(nodeWebhookFetch(url, { method: 'POST', body: '{}', signal: AbortSignal.timeout(5000) }, null)).rejects.toThrow(/ENOTFOUND|EAI_AGAIN/);
  });
});
