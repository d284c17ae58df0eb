import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { fixedClock } from '../../src/adapters/clock.js';
import { createApiKey } from '../../src/auth/store.js';
import { s256Challenge } from '../../src/oauth/pkce.js';
import { createCode, createCsrf, registerClient } from '../../src/oauth/store.js';
import { loginCsrfBinding } from '../../src/oauth/login-cookie.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import { insertEvents, makeEvent } from '../helpers/events-gen.js';
import { newProject } from '../helpers/report-fixtures.js';
import { runDueExports } from '../../src/jobs/scheduled-exports.js';
import { smtpMailer } from '../../src/notify/smtp-mailer.js';
import { signUnsubscribe, unsubscribeSecret } from '../../src/notify/unsubscribe-token.js';
import { alertStore } from '../../src/notify/alert-store.js';
import { REPORTS_DUE_KEY } from '../../src/notify/email-report-store.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

/**
 * The API document is the contract: every route of the app is in it, every route is called
 * (a success and an error), and every real answer matches the schema the document gives for
 * its status and content type. Routes added later are picked up from `app.routes`.
 */

const NOW = Date.parse('2026-03-18T15:30:00Z');
type Doc = { paths: Record<string, Record<string, Operation>>; components?: Record<string, unknown> };
type Operation = { security?: Record<string, string[]>[]; responses: Record<string, { content?: Record<string, { schema?: object }> }> };
type Call = { method: string; path: string; headers?: Record<string, string>; body?: string };

let h: Harness;
let doc: Doc;
let alice: TestUser;
let site: { domain: string; id: string };
let smtp: SmtpSink;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
/** `METHOD /openapi/{path}` → statuses seen, to prove each route got a success and an error. */
const seen = new Map<string, number[]>();

const toDocPath = (honoPath: string) => honoPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
const ignored = (path: string) => path === '/openapi.json' || path === '/health' || path.includes('*') || (path.split('/').pop() ?? '').includes('.');

/** Every (method, path) the app serves, deduplicated, without middleware-only entries. */
function appRoutes(): { method: string; path: string }[] {
  const out = new Map<string, { method: string; path: string }>();
  for (const r of h.app.routes) {
    if (r.method === 'ALL' || ignored(r.path)) continue;
    out.set(`${r.method} ${r.path}`, { method: r.method, path: toDocPath(r.path) });
  }
  return [...out.values()];
}

function tokenFor(op: Operation): string | undefined {
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (schemes.length === 0) return undefined;
  return schemes.includes('bearerApiKey') ? alice.writeKey : alice.session;
}

const json = (value: unknown) => JSON.stringify(value);
const formBody = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'Content-Type': 'application/json' };

/** Sends a call and checks the answer against the document; returns status and text. */
async function exercise(docPath: string, call: Call): Promise<{ status: number; text: string }> {
  const method = call.method.toLowerCase();
  const op = doc.paths[docPath]?.[method];
  expect(op, `${call.method} ${docPath} is not in /openapi.json`).toBeDefined();
  const res = await h.app.request(call.path, { method: call.method, headers: call.headers, body: call.body, redirect: 'manual' });
  const text = await res.text();
  const where = `${call.method} ${call.path} → ${res.status} ${text.slice(0, 200)}`;
  const entry = op.responses[String(res.status)] ?? op.responses.default;
  expect(entry, `${where}: status not documented`).toBeDefined();
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim();
  if (entry.content && text.length > 0) {
    const media = entry.content[type];
    expect(media, `${where}: content type ${type} not documented (has ${Object.keys(entry.content)})`).toBeDefined();
    if (type === 'application/json' && media.schema) {
      const validate = ajv.compile({ ...media.schema, components: doc.components });
      const ok = validate(JSON.parse(text));
      expect(ok, `${where}: body does not match the schema: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  }
  const key = `${call.method} ${docPath}`;
  seen.set(key, [...(seen.get(key) ?? []), res.status]);
  return { status: res.status, text };
}

/** Fills `{param}`s from fixtures. */
const fill = (docPath: string, values: Record<string, string>) =>
  docPath.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (!(name in values)) throw new Error(`no fixture value for path parameter ${name} in ${docPath}`);
    return encodeURIComponent(values[name]);
  });

/**
 * Success calls for routes that need a body or a prepared record. GET routes without a body
 * need no entry: they are called with fixture path parameters. A non-GET route missing here
 * fails the test.
 */
function successCalls(): Record<string, () => Promise<Call>> {
  const v1 = (rest: string) => `/api/v1/projects/${site.domain}${rest}`;
  const bearer = (token: string, extra: Record<string, string> = JSON_TYPE) => ({ Authorization: `Bearer ${token}`, ...extra });
  const api = (method: string, path: string, body?: unknown, token = alice.writeKey): Call => ({ method, path, headers: bearer(token), body: body === undefined ? undefined : json(body) });
  const created = async (path: string, body: unknown) => (await (await h.call('POST', path, { token: alice.writeKey, body })).json()) as { id: string };
  const oauthParams = async (clientId: string, verifier: string) => ({
    response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1:9/cb', code_challenge: await s256Challenge(verifier), code_challenge_method: 'S256', resource: 'http://localhost/mcp', scope: 'read',
  });
  const client = () => registerClient(h.deps.redis, { clientName: 'Contract', redirectUris: ['http://127.0.0.1:9/cb'] }, h.deps.clock.now());
  const verifier = 'v'.repeat(50);
  return {
    'POST /api/event': async () => ({ method: 'POST', path: '/api/event', headers: JSON_TYPE, body: json({ site: site.id, kind: 'pageview', url: `https://${site.domain}/contract` }) }),
    'POST /api/auth/login': async () => ({ method: 'POST', path: '/api/auth/login', headers: JSON_TYPE, body: json({ email: alice.email, password: alice.password }) }),
    'POST /api/auth/logout': async () => {
      const { token } = (await (await h.call('POST', '/api/auth/login', { body: { email: alice.email, password: alice.password } })).json()) as { token: string };
      return { method: 'POST', path: '/api/auth/logout', headers: bearer(token) };
    },
    'PATCH /api/account/profile': async () => api('PATCH', '/api/account/profile', { name: 'Alice' }, alice.session),
    'DELETE /api/account': async () => {
      const leaver = await h.user('leaver');
      return api('DELETE', '/api/account', { confirm: true, password: leaver.password }, leaver.session);
    },
    'POST /api/account/keys': async () => api('POST', '/api/account/keys', { scope: 'read', name: 'contract' }, alice.session),
    'DELETE /api/account/keys': async () => {
      const { record } = await createApiKey(h.deps.redis, { accountId: alice.accountId, scope: 'read', name: 'gone' }, h.deps.clock.now());
      return api('DELETE', '/api/account/keys', { id: record.id }, alice.session);
    },
    'POST /api/v1/projects': async () => api('POST', '/api/v1/projects', { name: 'Contract', domain: h.domain('contract') }),
    'PATCH /api/v1/projects/{domain}': async () => api('PATCH', v1(''), { name: 'Renamed' }),
    'DELETE /api/v1/projects/{domain}': async () => {
      const doomed = await newProject(h, alice);
      return api('DELETE', `/api/v1/projects/${doomed.domain}`, { confirm: true });
    },
    // The analysis routes with every parameter they take (a read key is enough).
    'GET /api/share/{domain}/breakdown': async () => ({ method: 'GET', path: `/api/share/${site.domain}/breakdown?dimension=page`, headers: {} }),
    'GET /api/v1/projects/{domain}/breakdown': async () =>
      api('GET', v1('/breakdown?dimension=page&metrics=visitors,pageviews,bounceRate&filters=page%3D%3D%2F%7C%2Fb&period=7d&compare=previous_period&limit=5&offset=0'), undefined, alice.readKey),
    'POST /api/v1/projects/{domain}/query': async () =>
      api('POST', v1('/query'), {
        metrics: ['visitors', 'pageviews', 'avgDurationSeconds'],
        dimensions: ['time:day', 'page'],
        filters: [['is', 'country', ['US']]],
        period: 'custom',
        from: '2026-03-12',
        to: '2026-03-18',
        compare: 'year_over_year',
        orderBy: [['visitors', 'desc']],
        limit: 100,
        offset: 0,
      }, alice.readKey),
    'POST /api/v1/projects/{domain}/install/verify': async () => api('POST', v1('/install/verify')),
    'POST /api/v1/projects/{domain}/hits': async () => api('POST', v1('/hits'), [{ path: '/robots', userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', ip: '66.249.66.1' }]),
    'POST /api/v1/projects/{domain}/import': async () => ({
      method: 'POST', path: v1('/import'), headers: bearer(alice.writeKey, { 'Content-Type': 'application/x-ndjson' }),
      body: json({ timestamp: new Date(NOW - 3600_000).toISOString(), kind: 'pageview', visitorId: 'v1', sessionId: 's1', url: `https://${site.domain}/imported` }) + '\n',
    }),
    'POST /api/v1/projects/{domain}/goals': async () => api('POST', v1('/goals'), { name: 'Signups', type: 'event', value: 'signup' }),
    'DELETE /api/v1/projects/{domain}/goals/{id}': async () => api('DELETE', v1(`/goals/${(await created(v1('/goals'), { name: 'Tmp', type: 'pageview', value: '/x' })).id}`)),
    'POST /api/v1/projects/{domain}/funnels': async () => api('POST', v1('/funnels'), { name: 'F', steps: [{ type: 'pageview', value: '/' }, { type: 'event', value: 'signup' }] }),
    'DELETE /api/v1/projects/{domain}/funnels/{id}': async () => api('DELETE', v1(`/funnels/${(await created(v1('/funnels'), { name: 'Tmp', steps: [{ type: 'pageview', value: '/' }, { type: 'pageview', value: '/b' }] })).id}`)),
    'PUT /api/v1/projects/{domain}/export/schedule': async () => api('PUT', v1('/export/schedule'), { frequency: 'daily', period: '7d' }),
    'PUT /api/v1/projects/{domain}/excluded-ips': async () => api('PUT', v1('/excluded-ips'), { ips: ['203.0.113.7'] }),
    'DELETE /api/v1/projects/{domain}/export/schedule': async () => {
      await h.call('PUT', v1('/export/schedule'), { token: alice.writeKey, body: { frequency: 'daily' } });
      return api('DELETE', v1('/export/schedule'));
    },
    'PUT /api/v1/projects/{domain}/email-reports': async () => api('PUT', v1('/email-reports'), { frequency: 'weekly', recipients: ['contract@reports.example'] }),
    'DELETE /api/v1/projects/{domain}/email-reports': async () => {
      await h.call('PUT', v1('/email-reports'), { token: alice.writeKey, body: { frequency: 'weekly', recipients: ['gone@reports.example'] } });
      return api('DELETE', v1('/email-reports'));
    },
    'POST /api/v1/projects/{domain}/email-reports/send': async () => {
      await h.call('PUT', v1('/email-reports'), { token: alice.writeKey, body: { frequency: 'monthly', recipients: ['contract@reports.example'] } });
      return api('POST', v1('/email-reports/send'));
    },
    'POST /api/v1/projects/{domain}/alerts': async () => api('POST', v1('/alerts'), { type: 'spike', visitors: 100, email: ['oncall@reports.example'], webhookUrl: 'https://93.184.215.14/contract' }),
    'DELETE /api/v1/projects/{domain}/alerts/{id}': async () => api('DELETE', v1(`/alerts/${(await created(v1('/alerts'), { type: 'silent', hours: 4, webhookUrl: 'https://93.184.215.14/tmp' })).id}`)),
    'GET /email-reports/unsubscribe': async () => ({ method: 'GET', path: `/email-reports/unsubscribe?token=${await unsubscribeToken('contract@reports.example')}` }),
    'POST /email-reports/unsubscribe': async () => ({
      method: 'POST', path: `/email-reports/unsubscribe?token=${await unsubscribeToken('nobody@reports.example')}`, headers: FORM, body: 'List-Unsubscribe=One-Click',
    }),
    'POST /api/v1/projects/{domain}/members': async () => api('POST', v1('/members'), { email: (await h.user('member')).email, role: 'member' }),
    'DELETE /api/v1/projects/{domain}/members': async () => {
      const { email } = await h.user('ex-member');
      await h.call('POST', v1('/members'), { token: alice.writeKey, body: { email, role: 'admin' } });
      return api('DELETE', v1('/members'), { email });
    },
    'POST /oauth/register': async () => ({ method: 'POST', path: '/oauth/register', headers: JSON_TYPE, body: json({ redirect_uris: ['https://agent.example/cb'], client_name: 'Contract' }) }),
    'POST /oauth/token': async () => {
      const c = await client();
      const code = await createCode(h.deps.redis, { accountId: alice.accountId, clientId: c.clientId, redirectUri: 'http://127.0.0.1:9/cb', codeChallenge: await s256Challenge(verifier), scope: 'read', resource: 'http://localhost/mcp' }, h.deps.clock.now());
      return { method: 'POST', path: '/oauth/token', headers: FORM, body: formBody({ grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:9/cb', client_id: c.clientId, code_verifier: verifier }) };
    },
    'POST /oauth/revoke': async () => ({ method: 'POST', path: '/oauth/revoke', headers: FORM, body: formBody({ token: 'slo_unknown', client_id: (await client()).clientId }) }),
    'GET /oauth/authorize': async () => ({ method: 'GET', path: `/oauth/authorize?${new URLSearchParams(await oauthParams((await client()).clientId, verifier))}`, headers: {} }),
    'POST /oauth/authorize': async () => {
      const params = await oauthParams((await client()).clientId, verifier);
      const browser = 'b'.repeat(43);
      const csrf = await createCsrf(h.deps.redis, await loginCsrfBinding(browser));
      return { method: 'POST', path: '/oauth/authorize', headers: { ...FORM, Cookie: `sl_login=${browser}` }, body: formBody({ ...params, action: 'login', csrf, email: alice.email, password: alice.password }) };
    },
    'POST /mcp': async () => ({
      method: 'POST', path: '/mcp', headers: bearer(alice.writeKey, { ...JSON_TYPE, Accept: 'application/json, text/event-stream' }),
      body: json({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'contract', version: '1' } } }),
    }),
    'GET /mcp': async () => ({ method: 'GET', path: '/mcp', headers: bearer(alice.writeKey) }),
    'DELETE /mcp': async () => ({ method: 'DELETE', path: '/mcp', headers: bearer(alice.writeKey) }),
  };
}

/** A signed unsubscribe token of the fixture project, as the email carries it. */
const unsubscribeToken = async (email: string) => encodeURIComponent(await signUnsubscribe(await unsubscribeSecret(h.deps), { projectId: site.id, email }));

/** An error call: no credential where one is needed, else a body that cannot be valid. */
function errorCall(method: string, docPath: string, op: Operation, params: Record<string, string>): Call {
  const path = fill(docPath, params);
  if ((op.security ?? []).length > 0) return { method, path, headers: JSON_TYPE, body: method === 'GET' ? undefined : '{}' };
  // Public stats routes fail for a project whose stats are not public.
  if (docPath.includes('share/{domain}')) return { method, path: fill(docPath, { ...params, domain: 'no-such-project.example' }), headers: {} };
  if (method === 'GET') return { method, path: `${path}?client_id=`, headers: {} };
  const type = docPath.startsWith('/oauth/') && docPath !== '/oauth/register' ? FORM : JSON_TYPE;
  return { method, path, headers: type, body: type === FORM ? 'grant_type=nonsense' : '{"bad": true' };
}

beforeAll(async () => {
  // Email routes answer 409 without a mailer: a real SMTP server receives what the contract calls send.
  smtp = await startSmtpSink();
  h = await createHarness({ clock: fixedClock(NOW), mailer: smtpMailer(smtp.url, 'contract@stats.example') });
  alice = await h.user('alice');
  site = await newProject(h, alice);
  // The public stats routes (/share, /api/share) answer only for a project with public stats on.
  await h.call('PATCH', `/api/v1/projects/${site.domain}`, { token: alice.writeKey, body: { publicStatsEnabled: true } });
  await insertEvents(h.deps.rowStore, site.id, [
    makeEvent({ ts: NOW - 3600_000, visitor: 1 }),
    makeEvent({ ts: NOW - 3500_000, visitor: 1, kind: 'custom', eventName: 'signup' }),
    makeEvent({ ts: NOW - 7200_000, visitor: 2, path: '/b', referrerSource: 'google.com' }),
  ]);
  doc = (await (await h.call('GET', '/openapi.json')).json()) as Doc;
});
afterAll(async () => {
  if (site) {
    await h.deps.redis.zrem(REPORTS_DUE_KEY, site.id);
    await alertStore.forgetProject(h.deps.redis, site.id);
  }
  await smtp?.close();
  await closeHarness();
});

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document (independent validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as never);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect((doc as { info?: { version?: string } }).info?.version).toBe('1.0.0');
  });

  it('schemas from the document reject a wrong body (the checks below are not vacuous)', () => {
    const op = doc.paths['/api/v1/projects']?.get;
    const schema = op?.responses['200']?.content?.['application/json']?.schema;
    const validate = ajv.compile({ ...schema, components: doc.components });
    expect(validate({ projects: [] })).toBe(true);
    expect(validate({ projects: [{ id: 1 }] })).toBe(false);
    expect(validate({})).toBe(false);
  });

  it('describes every route of the app', () => {
    const missing = appRoutes().filter((r) => !doc.paths[r.path]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    expect(Object.keys((doc.components as { securitySchemes: object }).securitySchemes)).toEqual(expect.arrayContaining(['bearerApiKey', 'session', 'oauth2']));
  });

  it('documents the parameters of the analysis routes', () => {
    const params = (doc.paths['/api/v1/projects/{domain}/breakdown']?.get as unknown as { parameters: { name: string; in: string }[] }).parameters;
    expect(params.filter((p) => p.in === 'query').map((p) => p.name).sort()).toEqual(['compare', 'dimension', 'filters', 'from', 'limit', 'metrics', 'offset', 'period', 'to']);
    expect(params.find((p) => p.name === 'dimension')).toMatchObject({ required: true });
    const body = (doc.paths['/api/v1/projects/{domain}/query']?.post as unknown as { requestBody: { content: Record<string, { schema: { properties: object; required: string[] } }> } }).requestBody.content['application/json']!.schema;
    expect(Object.keys(body.properties).sort()).toEqual(['compare', 'dimensions', 'filters', 'from', 'limit', 'metrics', 'offset', 'orderBy', 'period', 'to']);
    expect(body.required).toEqual(['metrics']);
    for (const path of ['/breakdown', '/query', '/realtime']) {
      const op = Object.values(doc.paths[`/api/v1/projects/{domain}${path}`]!)[0]!;
      expect(Object.keys(op.responses['200']!.content!), path).toEqual(['application/json', 'text/csv']);
    }
  });

  it('every route answers as documented, on success and on error', async () => {
    const successes = successCalls();
    const fixtureParams: Record<string, string> = { domain: site.domain };
    const visitors = JSON.parse((await exercise('/api/v1/projects/{domain}/visitors', { method: 'GET', path: `/api/v1/projects/${site.domain}/visitors?period=7d`, headers: { Authorization: `Bearer ${alice.readKey}` } })).text);
    fixtureParams.visitorId = String(visitors.data[0].visitorId);
    const funnel = (await (await h.call('POST', `/api/v1/projects/${site.domain}/funnels`, { token: alice.writeKey, body: { name: 'Fixture', steps: [{ type: 'pageview', value: '/' }, { type: 'pageview', value: '/b' }] } })).json()) as { id: string };
    fixtureParams.id = funnel.id;
    // A file written by the scheduled export, for the download route.
    await h.call('PUT', `/api/v1/projects/${site.domain}/export/schedule`, { token: alice.writeKey, body: { frequency: 'daily', period: '7d' } });
    await runDueExports(h.deps, NOW + 2 * 24 * 3600_000);
    const files = (await (await h.call('GET', `/api/v1/projects/${site.domain}/exports`, { token: alice.readKey })).json()) as { exports: { name: string }[] };
    fixtureParams.name = files.exports[0]?.name ?? 'none.csv';

    const unknownDomain = { ...fixtureParams, domain: 'no-such-project.example' };
    for (const { method, path: docPath } of appRoutes()) {
      const key = `${method} ${docPath}`;
      const op = doc.paths[docPath][method.toLowerCase()];
      const make = successes[key];
      if (!make && method !== 'GET') throw new Error(`no success call for ${key}: add one to successCalls()`);
      const call = make ? await make() : { method, path: fill(docPath, fixtureParams), headers: tokenFor(op) ? { Authorization: `Bearer ${tokenFor(op)}` } : {} };
      const ok = await exercise(docPath, call);
      // Without a file store in the deps no scheduled file can exist: the download can only 404 (documented).
      const noFiles = docPath.endsWith('/exports/{name}') && !h.deps.exportStore;
      expect(ok.status, `${key} success call: ${ok.text.slice(0, 200)}`).toBeLessThan(noFiles ? 405 : docPath === '/mcp' && method !== 'POST' ? 406 : 400);

      await exercise(docPath, errorCall(method, docPath, op, fixtureParams));
      if (docPath.includes('{domain}') && (op.security ?? []).length > 0) {
        const token = tokenFor(op)!;
        const notFound = await exercise(docPath, { method, path: fill(docPath, unknownDomain), headers: { Authorization: `Bearer ${token}`, ...JSON_TYPE }, body: method === 'GET' ? undefined : '{}' });
        expect([400, 404], `${key} on an unknown project`).toContain(notFound.status);
      }
    }
    expect([...seen.keys()].sort()).toEqual(appRoutes().map((r) => `${r.method} ${r.path}`).sort());
    for (const { method, path } of appRoutes()) {
      const statuses = seen.get(`${method} ${path}`) ?? [];
      // Routes that document no error (public discovery documents) cannot be made to fail.
      const documentsErrors = Object.keys(doc.paths[path][method.toLowerCase()].responses).some((s) => Number(s) >= 400);
      if (documentsErrors) expect(statuses.some((s) => s >= 400), `${method} ${path} had no error call (${statuses})`).toBe(true);
      const noFiles = path.endsWith('/exports/{name}') && !h.deps.exportStore;
      expect(statuses.some((s) => s < 400 || noFiles || (path === '/mcp' && method !== 'POST')), `${method} ${path} had no success call (${statuses})`).toBe(true);
    }
  });
});
