import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { fixedClock } from '../../src/adapters/clock.js';
import { reports } from '../../src/reports/registry.js';
import { closeHarness, createHarness, listen, type Harness, type TestUser } from '../helpers/harness.js';
import { insertEvents, makeEvent } from '../helpers/events-gen.js';
import { newProject } from '../helpers/report-fixtures.js';

const NOW = Date.parse('2026-03-18T15:30:00Z');
const HOUR = 3600_000;

let h: Harness;
let server: { url: string; close(): Promise<void> };
let alice: TestUser;
let bob: TestUser;
let site: { domain: string; id: string };
let bobSite: { domain: string; id: string };
const open: Client[] = [];

async function connect(token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'sightline-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  open.push(client);
  return client;
}

const text = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;

/** POSTs one raw JSON-RPC message to /mcp. */
function rpc(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

beforeAll(async () => {
  h = await createHarness({ clock: fixedClock(NOW) });
  server = await listen(h.app);
  alice = await h.user('alice');
  bob = await h.user('bob');
  site = await newProject(h, alice);
  bobSite = await newProject(h, bob);
  const events = [
    makeEvent({ ts: NOW - 2 * HOUR, visitor: 1, path: '/' }),
    makeEvent({ ts: NOW - 2 * HOUR + 60_000, visitor: 1, path: '/pricing', referrerSource: 'google.com' }),
    makeEvent({ ts: NOW - 26 * HOUR, visitor: 2, path: '/', device: 'Mobile', browser: 'Safari', os: 'iOS', countryCode: 'DE', countryName: 'Germany', city: 'Berlin' }),
    makeEvent({ ts: NOW - 3 * 24 * HOUR, visitor: 3, path: '/docs', referrerSource: 't.co' }),
    makeEvent({ ts: NOW - 3 * 24 * HOUR + 5000, visitor: 3, kind: 'custom', eventName: 'signup' }),
    makeEvent({ ts: NOW - 3 * 24 * HOUR + 9000, visitor: 3, kind: 'transaction', eventName: 'Purchase', amountCents: 1999, currency: 'USD' }),
    makeEvent({ ts: NOW - 3 * 24 * HOUR + 30_000, visitor: 3, kind: 'leave', path: '/docs', durationMs: 30_000 }),
  ];
  await insertEvents(h.deps.rowStore, site.id, events);
});

afterAll(async () => {
  for (const c of open) await c.close().catch(() => {});
  await server?.close();
  await closeHarness();
});

describe('MCP endpoint: transport and protocol', () => {
  it('initializes with the SDK client and lists every report as a tool', async () => {
    const client = await connect(alice.readKey);
    expect(client.getServerVersion()?.name).toBe('sightline');
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['list_projects', 'get_project', 'export_csv', ...reports.map((r) => `report_${r.name}`)]));
    for (const t of tools) {
      expect(t.annotations?.readOnlyHint, t.name).toBe(true);
      expect(t.inputSchema.type).toBe('object');
    }
    const stats = tools.find((t) => t.name === 'report_stats') as Tool;
    expect(stats.inputSchema.required).toContain('domain');
    expect((stats.inputSchema.properties as Record<string, { enum?: string[] }>).period.enum).toContain('7d');
  });

  it('negotiates protocol versions 2025-06-18 and 2025-11-25', async () => {
    for (const version of ['2025-06-18', '2025-11-25']) {
      const res = await rpc(initialize(version), { Authorization: `Bearer ${alice.readKey}` });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('application/json');
      const body = await res.json();
      expect(body.result.protocolVersion).toBe(version);
      expect(body.result.capabilities.tools).toBeDefined();
    }
  });

  it('answers with an event stream when the client accepts only text/event-stream', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 7, method: 'tools/list' }, { Authorization: `Bearer ${alice.readKey}`, Accept: 'text/event-stream', 'MCP-Protocol-Version': '2025-11-25' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const raw = await res.text();
    const data = raw.split('\n').find((l) => l.startsWith('data: '));
    const message = JSON.parse(data!.slice(6));
    expect(message.id).toBe(7);
    expect(message.result.tools.length).toBeGreaterThan(3);
  });

  it('refuses GET and DELETE with 405 (stateless endpoint)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${server.url}/mcp`, { method, headers: { Authorization: `Bearer ${alice.readKey}`, Accept: 'text/event-stream' } });
      expect(res.status, method).toBe(405);
    }
  });

  it('answers 401 with the resource_metadata challenge, invalid_token for a bad token', async () => {
    const res = await rpc(initialize('2025-11-25'));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`);
    expect(await res.json()).toEqual({ error: 'Invalid or missing API key' });

    const revokedLike = `sl_${'A'.repeat(22)}AAAAAA`;
    const bad = await rpc(initialize('2025-11-25'), { Authorization: `Bearer ${revokedLike}` });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(bad.headers.get('www-authenticate')).toContain('resource_metadata=');
    // A session token is not a credential for /mcp.
    expect((await rpc(initialize('2025-11-25'), { Authorization: `Bearer ${alice.session}` })).status).toBe(401);
    await expect(connect(undefined)).rejects.toThrow();
  });

  it('refuses a foreign Origin with 403 and accepts its own', async () => {
    const auth = { Authorization: `Bearer ${alice.readKey}` };
    expect((await rpc(initialize('2025-11-25'), { ...auth, Origin: 'https://evil.example' })).status).toBe(403);
    expect((await rpc(initialize('2025-11-25'), { ...auth, Origin: server.url })).status).toBe(200);
  });

  it('serves protected-resource metadata at both well-known paths', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        resource: `${server.url}/mcp`,
        authorization_servers: [server.url],
        scopes_supported: ['read', 'write'],
        bearer_methods_supported: ['header'],
      });
    }
  });
});

describe('MCP tools answer what REST answers', () => {
  it('list_projects and get_project', async () => {
    const client = await connect(alice.readKey);
    const listed = (await client.callTool({ name: 'list_projects', arguments: {} })) as CallToolResult;
    const rest = await (await h.call('GET', '/api/v1/projects', { token: alice.readKey })).json();
    expect(listed.isError).toBeFalsy();
    expect(JSON.parse(text(listed))).toEqual(rest);
    expect(listed.structuredContent).toEqual(rest);

    const detail = (await client.callTool({ name: 'get_project', arguments: { domain: site.domain } })) as CallToolResult;
    expect(JSON.parse(text(detail))).toEqual(await (await h.call('GET', `/api/v1/projects/${site.domain}`, { token: alice.readKey })).json());
  });

  it('every report tool equals the REST report for the same question', async () => {
    const client = await connect(alice.readKey);
    const { tools } = await client.listTools();
    const reportTools = tools.filter((t) => t.name.startsWith('report_'));
    expect(reportTools.length).toBe(reports.length);
    for (const def of reports) {
      const tool = reportTools.find((t) => t.name === `report_${def.name}`)!;
      const args: Record<string, unknown> = { domain: site.domain };
      const props = tool.inputSchema.properties as Record<string, { enum?: string[] }>;
      if (props.period?.enum?.includes('7d')) args.period = '7d';
      // Required arguments beyond domain must come from a fixture below: a new one fails here.
      const extra = (tool.inputSchema.required ?? []).filter((r) => r !== 'domain');
      for (const name of extra) args[name] = await fixtureArgument(client, name, def.path);
      const result = (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult;
      const path = def.path.replace(/:(\w+)/g, (_m, p: string) => encodeURIComponent(String(args[p])));
      const query = new URLSearchParams(Object.entries(args).filter(([k]) => k !== 'domain' && !def.path.includes(`:${k}`)).map(([k, v]) => [k, String(v)]));
      const res = await h.call('GET', `/api/v1/projects${path}?${query}`, { token: alice.readKey });
      const restBody = await res.json();
      expect(res.status, def.name).toBe(200);
      expect(result.isError, `${def.name}: ${text(result)}`).toBeFalsy();
      expect(JSON.parse(text(result)), def.name).toEqual(restBody);
    }
    // The data set is not empty: the comparison above compared real numbers.
    const stats = (await client.callTool({ name: 'report_stats', arguments: { domain: site.domain, period: '7d' } })) as CallToolResult;
    expect(JSON.parse(text(stats)).pageviews).toBe(4);
  });

  it('report tools take limit as a number and give the REST 400 message as a tool error', async () => {
    const client = await connect(alice.readKey);
    const ok = (await client.callTool({ name: 'report_pages', arguments: { domain: site.domain, period: '7d', limit: 1 } })) as CallToolResult;
    expect(ok.isError).toBeFalsy();
    expect(JSON.parse(text(ok)).data).toHaveLength(1);
    const bad = (await client.callTool({ name: 'report_pages', arguments: { domain: site.domain, limit: 1000 } })) as CallToolResult;
    const rest = await (await h.call('GET', `/api/v1/projects/${site.domain}/pages?limit=1000`, { token: alice.readKey })).json();
    expect(bad.isError).toBe(true);
    expect(text(bad)).toBe(rest.error);
    const badPeriod = (await client.callTool({ name: 'report_stats', arguments: { domain: site.domain, period: 'forever' } })) as CallToolResult;
    expect(badPeriod.isError).toBe(true);
    expect(text(badPeriod)).toMatch(/^period must be one of: /);
  });

  it('export_csv gives the CSV text of the export route', async () => {
    const client = await connect(alice.readKey);
    const result = (await client.callTool({ name: 'export_csv', arguments: { domain: site.domain, period: '7d', limit: 5 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const csv = text(result);
    const rest = await (await h.call('GET', `/api/v1/projects/${site.domain}/export?period=7d&limit=5`, { token: alice.readKey })).text();
    expect(csv).toBe(rest);
    expect(csv).toContain('metric,value');
    expect(csv).toContain('path,pageviews,visitors');
  });

  it('applies the 404 rule: a foreign or unknown project is a tool error "Project not found"', async () => {
    const client = await connect(alice.readKey);
    for (const domain of [bobSite.domain, 'nothing-here.example.org']) {
      for (const name of ['get_project', 'report_stats', 'export_csv']) {
        const result = (await client.callTool({ name, arguments: { domain } })) as CallToolResult;
        expect(result.isError, `${name} ${domain}`).toBe(true);
        expect(text(result)).toBe('Project not found');
      }
    }
    // Ids that cannot name a project are unknown too; dot segments would name another route, and are refused.
    for (const domain of [`${bobSite.domain}:members`, '*', `${bobSite.domain}\u0000`]) {
      const result = (await client.callTool({ name: 'report_stats', arguments: { domain } })) as CallToolResult;
      expect(text(result), JSON.stringify(domain)).toBe('Project not found');
    }
    for (const domain of ['.', '..', ' .. ']) {
      const result = (await client.callTool({ name: 'get_project', arguments: { domain } })) as CallToolResult;
      expect(result.isError, domain).toBe(true);
      expect(text(result)).toBe('domain is not valid');
    }
    const missing = (await client.callTool({ name: 'report_stats', arguments: {} })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(text(missing)).toBe('domain is required');
  });
});

describe('MCP write tools', () => {
  it('are not listed for a read-only key and calling one is refused like REST', async () => {
    const client = await connect(alice.readKey);
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const w of ['create_project', 'update_project', 'create_goal', 'delete_goal']) expect(names).not.toContain(w);
    const result = (await client.callTool({ name: 'create_project', arguments: { name: 'Nope', domain: h.domain('nope') } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('API key is read-only');
    expect((await h.call('GET', '/api/v1/projects', { token: alice.readKey }).then((r) => r.json())).projects.some((p: { name: string }) => p.name === 'Nope')).toBe(false);
  });

  it('are listed with annotations for a write key and change the same records as REST', async () => {
    const client = await connect(alice.writeKey);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('create_project')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(byName.get('update_project')?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    expect(byName.get('delete_goal')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('create_goal')?.inputSchema.required).toEqual(expect.arrayContaining(['domain', 'name', 'type']));

    const domain = h.domain('mcp-made');
    const created = (await client.callTool({ name: 'create_project', arguments: { name: 'Made by agent', domain: `https://www.${domain}/x` } })) as CallToolResult;
    expect(created.isError, text(created)).toBeFalsy();
    expect(JSON.parse(text(created))).toMatchObject({ name: 'Made by agent', domain, accessRole: 'owner' });
    const dup = (await client.callTool({ name: 'create_project', arguments: { name: 'Again', domain } })) as CallToolResult;
    expect(dup.isError).toBe(true);
    expect(text(dup)).toBe('You already have a project for this domain');

    const updated = (await client.callTool({ name: 'update_project', arguments: { domain, name: 'Renamed', publicStatsEnabled: true } })) as CallToolResult;
    expect(JSON.parse(text(updated))).toMatchObject({ name: 'Renamed', publicStatsEnabled: true });
    const none = (await client.callTool({ name: 'update_project', arguments: { domain } })) as CallToolResult;
    expect(text(none)).toBe('No valid fields to update');

    const goal = (await client.callTool({ name: 'create_goal', arguments: { domain, name: 'Signups', type: 'event', value: 'signup' } })) as CallToolResult;
    expect(goal.isError, text(goal)).toBeFalsy();
    const goalId = JSON.parse(text(goal)).id as string;
    const removed = (await client.callTool({ name: 'delete_goal', arguments: { domain, id: goalId } })) as CallToolResult;
    expect(JSON.parse(text(removed))).toEqual({ ok: true });
    const again = (await client.callTool({ name: 'delete_goal', arguments: { domain, id: goalId } })) as CallToolResult;
    expect(again.isError).toBe(true);
    expect(text(again)).toBe('Goal not found');

    // Bob's project stays invisible to write tools too.
    const foreign = (await client.callTool({ name: 'update_project', arguments: { domain: bobSite.domain, name: 'x' } })) as CallToolResult;
    expect(text(foreign)).toBe('Project not found');
  });
});

/** Values for required tool arguments beyond `domain`, found through other tools. */
async function fixtureArgument(client: Client, name: string, path: string): Promise<string> {
  if (name === 'id' && path.includes('/funnels/')) {
    const res = await h.call('POST', `/api/v1/projects/${site.domain}/funnels`, {
      token: alice.writeKey,
      body: { name: 'Home to pricing', steps: [{ type: 'pageview', value: '/' }, { type: 'pageview', value: '/pricing' }] },
    });
    return ((await res.json()) as { id: string }).id;
  }
  if (name === 'visitorId') {
    const r = (await client.callTool({ name: 'report_visitors', arguments: { domain: site.domain, period: '7d' } })) as CallToolResult;
    const body = JSON.parse(text(r));
    const first = (body.data ?? body.visitors ?? [])[0];
    const id = first?.visitorId ?? first?.id;
    if (typeof id === 'string') return id;
  }
  throw new Error(`no fixture for required tool argument ${name}`);
}
