import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashToUInt64 } from '../../src/ingest/enrich/visitor.js';
import { s256Challenge } from '../../src/oauth/pkce.js';
import { createCode } from '../../src/oauth/store.js';
import { unique, type TestUser } from '../helpers/harness.js';
import { addMember } from '../helpers/report-fixtures.js';
import { useHarness } from '../helpers/setup.js';
import { anyJson, anyText, encodeAny, extraHeaders, hostileSegment, QUERY_VALUES, wildText } from './fuzz-inputs.js';

/** An email no account has: unique per run, since a fuzzed profile PATCH may take any address it is given. */
const NOBODY = `${unique('nobody')}@nowhere.example`;

/**
 * Every operation of `/openapi.json`, fuzzed with fast-check through the in-process app: hostile
 * path parameters (real ids, `x:members`, `..`, `%00`, invalid UTF-8, long, any Unicode), query
 * strings (the documented parameters with accepted and random values, unknown ones), bodies (valid
 * ones with one field broken, bodies shaped by the operation's schema with values of any type,
 * any JSON, NDJSON, forms, not JSON at all; strings carry lone surrogates and controls), content
 * types and extra headers, sent with no credential, a read key, a write key, a session and another
 * account's key. Whatever the input: no answer is a 5xx, and every error answer is JSON with a
 * string `error` (JSON-RPC errors on /mcp; HTML where the document gives only a page).
 *
 * Each operation gets a fresh account owning a project with a goal and a funnel, admin of a shared
 * project holding events (public stats on), and an OAuth client: a fuzzed DELETE /api/account or
 * logout must not blind the operations after it. Knobs for a longer hunt: FUZZ_RUNS (inputs per
 * operation), FUZZ_SEED (replays a run; printed on failure), FUZZ_ONLY (operations whose
 * `METHOD /path` contains it), FUZZ_STATS=1 (answers per operation, to see how deep inputs get).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);
// Every operation sends from one address and with one stranger's key: no per-minute limit in the way.
const ctx = useHarness(['stranger', 'dataOwner'], { env: { RATE_LIMIT_API_PER_MIN: '1000000' } });
const STATS = process.env.FUZZ_STATS === '1';
/** PKCE verifier of the authorization codes each context holds. */
const VERIFIER = 'fuzz-verifier-'.padEnd(50, 'v');
const stats: Record<string, Record<string, number>> = {};

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; $ref?: string; anyOf?: Schema[]; oneOf?: Schema[]; enum?: unknown[] };
type Parameter = { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: Schema };
type Operation = { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema?: Schema }> }; responses: Record<string, { content?: Record<string, unknown> }> };
type Doc = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

let doc: Doc;
/** A project with events in it (public stats on), which every fresh account may read as an admin. */
let data: { domain: string; id: string; visitorId: string };
beforeAll(async () => {
  // Owned by an account the fuzzer never sends as, so no fuzzed DELETE can remove it.
  const { h, dataOwner } = ctx;
  doc = await (await h.call('GET', '/openapi.json')).json();
  const domain = h.domain('fuzz-data');
  const created = await h.call('POST', '/api/v1/projects', { token: dataOwner.writeKey, body: { name: 'Data', domain } });
  expect(created.status).toBe(201);
  const id = (await created.json()).id as string;
  expect((await h.call('PATCH', `/api/v1/projects/${domain}`, { token: dataOwner.writeKey, body: { publicStatsEnabled: true } })).status).toBe(200);
  const now = Date.now();
  const line = (i: number, extra: object) => JSON.stringify({ timestamp: new Date(now - i * 60_000).toISOString(), url: `https://${domain}/p${i % 3}`, visitorId: `v${i % 4}`, sessionId: `s${i % 5}`, referrer: 'https://www.google.com/', countryCode: 'DE', city: 'Berlin', browser: 'Firefox', os: 'Linux', device: 'Desktop', ...extra });
  const lines = [
    ...Array.from({ length: 12 }, (_, i) => line(i, { kind: 'pageview' })),
    line(1, { kind: 'custom', name: 'signup', props: { plan: 'pro' } }),
    line(2, { kind: 'transaction', name: 'buy', amountCents: 1200, currency: 'EUR' }),
    line(3, { kind: 'vitals', vitals: { lcp: 1200, cls: 0.1, inp: 80 } }),
    line(4, { kind: 'leave', durationMs: 30_000 }),
  ];
  const imported = await h.app.request(`/api/v1/projects/${domain}/import`, { method: 'POST', headers: { Authorization: `Bearer ${dataOwner.writeKey}`, 'Content-Type': 'application/x-ndjson' }, body: lines.join('\n') });
  expect(await imported.json()).toMatchObject({ imported: lines.length });
  data = { domain, id, visitorId: hashToUInt64('v1') };
});

// ---------- inputs ----------
function resolve(schema: Schema | undefined): Schema | undefined {
  if (!schema?.$ref) return schema;
  const name = schema.$ref.split('/').pop()!;
  return doc.components?.schemas?.[name];
}

/** Property names a request schema names (one level, through $ref and unions). */
function fieldsOf(schema: Schema | undefined): string[] {
  const s = resolve(schema);
  if (!s) return [];
  const own = Object.keys(s.properties ?? {});
  const nested = [...(s.anyOf ?? []), ...(s.oneOf ?? [])].flatMap(fieldsOf);
  return [...new Set([...own, ...nested])];
}

/**
 * Values that pass a field's validation or come close, by field name, so generated requests get
 * past the first check and reach the code behind it (lookups, storage, queries).
 */
function plausibleValues(c: Context): Record<string, fc.Arbitrary<unknown>> {
  const { domain, projectId } = c;
  const path = anyText.map((t) => `/${encodeAny(t)}`);
  const url = fc.oneof(path.map((p) => `https://${domain}${p}`), fc.constantFrom(`https://${domain}/`, `https://www.${domain}/a#b`, `http://sub.${domain}/?utm_source=x`, 'https://other.example/', 'javascript:alert(1)', `https://${domain}/${'a'.repeat(3000)}`));
  const text = fc.oneof(fc.string({ maxLength: 30 }), anyText);
  const ip = fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('::ffff:127.0.0.1', '0.0.0.0', '999.1.1.1', 'fe80::1%eth0'));
  const ts = fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.constantFrom('1899-12-31T23:59:59Z', '2300-01-01T00:00:00Z', '2026-01-01', 'now'));
  const step = fc.record({ type: fc.constantFrom('pageview', 'event', 'x'), value: text });
  return {
    // Events (tracker and import lines)
    // Ids shaped like Redis key suffixes once answered 503 (WRONGTYPE taken for an outage).
    site: fc.constantFrom(projectId, `${projectId}x`, `${projectId}:members`, `${projectId}:goals`, `${projectId}:installed`, 'prj_missing', 'prj_', ''),
    kind: fc.constantFrom('pageview', 'leave', 'custom', 'transaction', 'vitals', 'x'),
    url,
    referrer: fc.oneof(url, text, fc.constant(null)),
    name: text,
    props: fc.dictionary(text, fc.oneof(text, fc.double(), fc.boolean()), { maxKeys: 4 }),
    visitorId: text,
    sessionId: text,
    durationMs: fc.oneof(fc.nat(), fc.double()),
    screenWidth: fc.oneof(fc.nat(70_000), fc.double()),
    amountCents: fc.oneof(fc.integer(), fc.double()),
    currency: fc.constantFrom('USD', 'EUR', 'usd', 'XXX', 'ABC', ''),
    vitals: fc.dictionary(fc.constantFrom('lcp', 'inp', 'cls', 'fcp', 'ttfb', 'x'), fc.oneof(fc.double(), text), { maxKeys: 5 }),
    timestamp: ts,
    ts,
    countryCode: fc.constantFrom('US', 'DE', 'us', 'XX', ''),
    city: text,
    region: text,
    browser: text,
    os: text,
    device: text,
    // Hits
    path: fc.oneof(path, text),
    userAgent: fc.oneof(text, fc.constantFrom('Googlebot/2.1 (+http://www.google.com/bot.html)', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0')),
    ip,
    status: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.double()),
    // Projects, goals, funnels, schedules, members, excluded IPs
    domain: fc.oneof(fc.constantFrom(domain, `www.${domain}`, `https://${domain}/x`, 'localhost', 'a.b', 'xn--80ak6aa92e.com', '例え.テスト'), text),
    timeZone: fc.oneof(fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kolkata', 'Mars/Olympus', 'utc', '+05:30'), text),
    publicStatsEnabled: fc.boolean(),
    brandColor: fc.oneof(fc.constantFrom('#ff0000', '#FFF', 'red', null), text),
    icon: fc.oneof(fc.constantFrom('https://example.com/i.png', 'data:image/png;base64,AA==', null), text),
    confirm: fc.oneof(fc.constant(true), anyJson),
    type: fc.constantFrom('event', 'pageview', 'revenue', 'traffic', 'engagement', 'x'),
    value: text,
    target: fc.oneof(fc.integer(), fc.double(), text),
    steps: fc.array(step, { maxLength: 10 }),
    ips: fc.array(ip, { maxLength: 105 }),
    frequency: fc.constantFrom('daily', 'weekly', 'monthly', 'hourly'),
    period: fc.constantFrom('today', '7d', '30d', '12m', 'x'),
    limit: fc.oneof(fc.integer({ min: -1, max: 600 }), text),
    webhookUrl: fc.constantFrom('https://example.com/hook', 'http://127.0.0.1:1/hook', 'http://169.254.169.254/', 'ftp://x', 'not a url'),
    email: fc.oneof(fc.constantFrom(c.user.email, NOBODY, 'a@b', ''), fc.emailAddress(), text),
    password: fc.oneof(fc.constantFrom(c.user.password, ''), text),
    currentPassword: fc.oneof(fc.constantFrom(c.user.password, ''), text),
    newPassword: text,
    role: fc.constantFrom('owner', 'admin', 'member', 'x'),
    scope: fc.constantFrom('read', 'write', 'admin', 'read write'),
    id: fc.oneof(fc.constantFrom('key_x', 'key_x:members', ''), text),
    // OAuth and MCP
    redirect_uris: fc.array(fc.oneof(fc.constantFrom('https://client.example/cb', 'http://127.0.0.1:9/cb', 'http://evil.example/cb', 'https://a/#f'), text), { maxLength: 12 }),
    client_name: text,
    client_id: fc.constantFrom(c.clientId, 'cli_x', `${c.clientId}:x`),
    redirect_uri: fc.constantFrom('https://client.example/cb', 'https://client.example/other', 'http://127.0.0.1/cb'),
    grant_type: fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'password'),
    code: fc.constantFrom(...c.codes, ...c.codes, 'slc_x', '', 'a'.repeat(2001)),
    code_verifier: fc.constantFrom(VERIFIER, VERIFIER, 'a'.repeat(43), 'short', 'b'.repeat(129)),
    refresh_token: fc.constantFrom('slr_x', ''),
    token: fc.constantFrom('slo_x', 'slr_x', ''),
    resource: fc.constantFrom('http://localhost/mcp', 'https://other.example/mcp'),
    response_type: fc.constantFrom('code', 'token'),
    code_challenge: fc.constantFrom('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 'x'),
    code_challenge_method: fc.constantFrom('S256', 'plain'),
    state: text,
    csrf: fc.constantFrom('x', ''),
    decision: fc.constantFrom('allow', 'deny', 'x'),
    jsonrpc: fc.constantFrom('2.0', '1.0'),
    method: fc.constantFrom('initialize', 'tools/list', 'tools/call', 'ping', 'notifications/initialized', 'x'),
    params: fc.oneof(
      fc.record({ name: fc.constantFrom('list_projects', 'get_project', 'report_stats', 'report_pages', 'export_csv', 'create_project', 'create_goal', 'delete_goal', 'x'), arguments: fc.dictionary(fc.constantFrom('domain', 'period', 'limit', 'name', 'type', 'value', 'id', 'filter'), fc.oneof(fc.constantFrom(domain, '7d'), anyJson), { maxKeys: 4 }) }),
      fc.record({ protocolVersion: fc.constantFrom('2025-06-18', '2025-11-25', '1999-01-01'), capabilities: fc.constant({}), clientInfo: fc.constant({ name: 'f', version: '1' }) }),
    ),
  };
}

/**
 * Bodies each operation accepts, built from the context (its project, goal, account), so the
 * fuzzer reaches the code behind validation; `mutated` then breaks at most one field of them.
 */
function validBodies(c: Context): Record<string, fc.Arbitrary<unknown>> {
  const { domain, projectId, user } = c;
  // Any code units, lone surrogates and controls included: what the edge must make storable.
  const text = fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }), wildText(10, 1));
  const page = fc.string({ maxLength: 20 }).map((t) => `https://${domain}/${encodeAny(t)}`);
  const event = fc.record(
    {
      site: fc.constant(projectId),
      kind: fc.constantFrom('pageview', 'leave', 'vitals'),
      url: page,
      referrer: fc.constantFrom('https://www.google.com/', 'https://news.ycombinator.com/item?id=1', null),
      props: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.oneof(text, fc.integer(), fc.boolean()), { maxKeys: 3 }),
      durationMs: fc.nat(100_000),
      screenWidth: fc.nat(4000),
      visitorId: text,
      vitals: fc.record({ lcp: fc.nat(5000), cls: fc.double({ min: 0, max: 1, noNaN: true }) }, { requiredKeys: [] }),
    },
    { requiredKeys: ['site', 'kind', 'url'] },
  );
  const custom = fc.tuple(event, text).map(([e, name]) => ({ ...e, kind: 'custom', name }));
  const transaction = fc.tuple(event, text, fc.integer({ min: 0, max: 1e9 })).map(([e, name, amountCents]) => ({ ...e, kind: 'transaction', name, amountCents, currency: 'EUR' }));
  const importLine = fc.tuple(fc.oneof(event, custom, transaction), fc.date({ min: new Date('2000-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }), text, text).map(([e, ts, visitorId, sessionId]) => {
    const { site: _site, screenWidth: _w, ...rest } = e as Record<string, unknown>;
    return { ...rest, timestamp: ts.toISOString(), visitorId, sessionId, countryCode: 'DE', city: 'Berlin', browser: 'Firefox', os: 'Linux', device: 'Desktop' };
  });
  const hit = fc.record(
    {
      ts: fc.date({ min: new Date('2000-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
      path: fc.oneof(fc.string({ maxLength: 20 }), wildText(10)).map((t) => `/${t}`),
      userAgent: fc.constantFrom('Googlebot/2.1 (+http://www.google.com/bot.html)', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0', 'GPTBot/1.0', 'curl/8'),
      ip: fc.oneof(fc.ipV4(), fc.ipV6()),
      status: fc.integer({ min: 100, max: 599 }),
      referrer: fc.constantFrom('https://www.google.com/', null),
    },
    { requiredKeys: ['path', 'userAgent', 'ip'] },
  );
  const step = fc.record({ type: fc.constantFrom('pageview', 'event'), value: fc.oneof(fc.constantFrom('/', '/pricing*', '*'), text) });
  return {
    'POST /api/event': fc.oneof(event, custom, transaction),
    'POST /api/v1/projects/{domain}/import': fc.array(importLine, { minLength: 1, maxLength: 5 }),
    'POST /api/v1/projects/{domain}/hits': fc.array(hit, { minLength: 1, maxLength: 5 }),
    'POST /api/auth/login': fc.constant({ email: user.email, password: user.password }),
    'PATCH /api/account/profile': fc.record({ name: text }),
    'POST /api/account/keys': fc.record({ scope: fc.constantFrom('read', 'write'), name: text }, { requiredKeys: ['scope'] }),
    'POST /api/v1/projects': fc.record({ name: text, domain: fc.string({ minLength: 1, maxLength: 10 }).map((t) => `${encodeURIComponent(t).replace(/%/g, '')}x.${domain}`), timeZone: fc.constantFrom('UTC', 'Asia/Kathmandu', 'America/St_Johns') }, { requiredKeys: ['name', 'domain'] }),
    'PATCH /api/v1/projects/{domain}': fc.record({ name: text, timeZone: fc.constantFrom('UTC', 'Europe/Berlin'), publicStatsEnabled: fc.boolean(), brandColor: fc.constantFrom('#112233', null) }, { requiredKeys: [] }),
    'POST /api/v1/projects/{domain}/goals': fc.record({ name: text, type: fc.constantFrom('event', 'pageview', 'revenue', 'traffic', 'engagement'), value: fc.oneof(fc.constantFrom('', '/*', 'signup'), text), target: fc.oneof(fc.nat(), fc.constant(null)) }, { requiredKeys: ['name', 'type'] }),
    'POST /api/v1/projects/{domain}/funnels': fc.record({ name: text, steps: fc.array(step, { minLength: 2, maxLength: 8 }) }),
    'PUT /api/v1/projects/{domain}/export/schedule': fc.record({ frequency: fc.constantFrom('daily', 'weekly', 'monthly'), period: fc.constantFrom('today', '7d', '30d', '12m'), limit: fc.integer({ min: 1, max: 500 }) }, { requiredKeys: ['frequency'] }),
    'POST /api/v1/projects/{domain}/members': fc.record({ email: fc.constantFrom(ctx.stranger.email, NOBODY), role: fc.constantFrom('admin', 'member') }),
    'DELETE /api/v1/projects/{domain}/members': fc.record({ email: fc.constantFrom(ctx.stranger.email, user.email) }),
    'PUT /api/v1/projects/{domain}/excluded-ips': fc.record({ ips: fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { maxLength: 100 }) }),
    'POST /oauth/token': fc.oneof(
      fc.record({ grant_type: fc.constant('authorization_code'), code: fc.constantFrom(...c.codes), redirect_uri: fc.constant('https://client.example/cb'), client_id: fc.constant(c.clientId), code_verifier: fc.constant(VERIFIER), resource: fc.constant('http://localhost/mcp') }),
      fc.record({ grant_type: fc.constant('refresh_token'), refresh_token: fc.constantFrom('slr_x', `slr_${'a'.repeat(40)}`), client_id: fc.constant(c.clientId) }),
    ),
    'POST /oauth/revoke': fc.record({ token: fc.constantFrom('slo_x', 'slr_x', ...c.codes), client_id: fc.constant(c.clientId), token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'x') }, { requiredKeys: ['token'] }),
    'POST /oauth/register': fc.record({ redirect_uris: fc.array(fc.constantFrom('https://client.example/cb', 'http://127.0.0.1:9/cb'), { minLength: 1, maxLength: 3 }), client_name: text }),
    'POST /mcp': fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.nat(),
      method: fc.constantFrom('tools/call', 'tools/list', 'initialize', 'ping'),
      params: fc.record({
        name: fc.constantFrom('list_projects', 'get_project', 'report_stats', 'report_pages', 'report_visitors', 'report_funnels', 'export_csv', 'create_goal', 'delete_goal', 'update_project', 'create_project'),
        arguments: fc.record({ domain: fc.constant(domain), period: fc.constantFrom('today', '7d', 'x'), limit: fc.integer({ min: -1, max: 600 }), name: text, type: fc.constantFrom('event', 'x'), value: text, id: fc.constantFrom('gol_x', `${projectId}:members`) }, { requiredKeys: ['domain'] }),
      }),
    }),
  };
}

/** A valid body, or one with a field changed to any value, removed, or an unknown one added. */
function mutated(valid: fc.Arbitrary<unknown>, plausible: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, fc.nat(), fc.oneof(anyJson, ...Object.values(plausible)), fc.constantFrom('keep', 'keep', 'replace', 'replace', 'remove', 'add')).map(([generated, pick, value, how]) => {
    // A copy: generated values may be shared between runs (fc.constant) and must stay intact.
    const body = structuredClone(generated);
    const target = Array.isArray(body) ? body[pick % body.length] : body;
    if (how === 'keep' || !target || typeof target !== 'object') return body;
    const record = target as Record<string, unknown>;
    const keys = Object.keys(record);
    const key = keys[pick % Math.max(1, keys.length)];
    if (how === 'add') record[`x${pick % 7}`] = value;
    else if (key !== undefined && how === 'replace') record[key] = value;
    else if (key !== undefined) delete record[key];
    return body;
  });
}

/**
 * An object with the schema's fields, each plausible or of any type: the `core` ones (what the
 * schema requires) always present, the others present or not, and now and then an unknown one.
 */
function shapedBody(fields: string[], core: string[], plausible: Record<string, fc.Arbitrary<unknown>>) {
  const valueOf = (f: string) => (plausible[f] ? fc.oneof({ weight: 4, arbitrary: plausible[f] }, { weight: 1, arbitrary: anyJson }) : anyJson);
  if (fields.length === 0) return fc.dictionary(fc.string({ maxLength: 10 }), anyJson, { maxKeys: 5 });
  const record = fc.record(Object.fromEntries(fields.map((f) => [f, valueOf(f)])), { requiredKeys: core.filter((f) => fields.includes(f)) });
  const extra = fc.option(fc.dictionary(fc.string({ maxLength: 10 }), anyJson, { maxKeys: 2 }), { nil: {}, freq: 3 });
  return fc.tuple(record, extra).map(([known, more]) => ({ ...more, ...known }));
}

/** Fields a schema requires (through $ref and unions). */
function requiredOf(schema: Schema | undefined): string[] {
  const s = resolve(schema) as (Schema & { required?: string[] }) | undefined;
  if (!s) return [];
  return [...new Set([...(s.required ?? []), ...[...(s.anyOf ?? []), ...(s.oneOf ?? [])].flatMap(requiredOf)])];
}

/** Fields of bodies the document gives no JSON schema for (NDJSON import lines, hit arrays, forms). */
const UNDOCUMENTED_FIELDS: Record<string, string[]> = {
  event: ['site', 'kind', 'url', 'referrer', 'name', 'props', 'visitorId', 'durationMs', 'screenWidth', 'amountCents', 'currency', 'vitals'],
  import: ['timestamp', 'kind', 'url', 'referrer', 'name', 'props', 'visitorId', 'sessionId', 'durationMs', 'amountCents', 'currency', 'vitals', 'countryCode', 'city', 'region', 'browser', 'os', 'device'],
  hits: ['ts', 'path', 'userAgent', 'ip', 'status', 'referrer'],
  oauthCore: ['grant_type', 'client_id'],
  eventCore: ['site', 'kind', 'url'],
  importCore: ['timestamp', 'kind', 'url', 'visitorId', 'sessionId'],
  hitsCore: ['path', 'userAgent', 'ip'],
  oauth: ['grant_type', 'code', 'redirect_uri', 'client_id', 'code_verifier', 'refresh_token', 'resource', 'token', 'response_type', 'code_challenge', 'code_challenge_method', 'scope', 'state', 'csrf', 'email', 'password', 'decision'],
};

interface Body {
  text?: string;
  type?: string;
}

/** An object as an urlencoded form: strings as they are, other values as JSON text. */
const toForm = (fields: Record<string, unknown>) =>
  Object.entries(fields)
    .map(([k, v]) => `${encodeAny(k)}=${encodeAny(typeof v === 'string' ? v : JSON.stringify(v) ?? '')}`)
    .join('&');

function bodyFor(method: string, path: string, op: Operation, c: Context): fc.Arbitrary<Body> {
  const plausible = plausibleValues(c);
  const valid = validBodies(c)[`${method} ${path}`];
  const schema = op.requestBody?.content['application/json']?.schema ?? op.requestBody?.content['multipart/form-data']?.schema;
  // The import reads its body as a stream, so the document gives no schema (nor a content type) for it.
  const documented = path.endsWith('/import') ? ['application/x-ndjson'] : Object.keys(op.requestBody?.content ?? {});
  const kind = path === '/api/event' ? 'event' : path.endsWith('/import') ? 'import' : path.endsWith('/hits') ? 'hits' : path.startsWith('/oauth/') ? 'oauth' : '';
  const fields = [...new Set([...fieldsOf(schema), ...(UNDOCUMENTED_FIELDS[kind] ?? [])])];
  const core = [...new Set([...requiredOf(schema), ...(UNDOCUMENTED_FIELDS[`${kind}Core`] ?? [])])];
  const shaped = shapedBody(fields, core, plausible);
  const loose = shapedBody(fields, [], plausible);
  const form = documented.includes('multipart/form-data');
  const contentType = fc.oneof(
    // Form routes (documented as multipart) mostly get the urlencoded forms generated below.
    { weight: 8, arbitrary: fc.constantFrom(...(form ? ['application/x-www-form-urlencoded'] : documented.length ? documented : ['application/json'])) },
    { weight: 1, arbitrary: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'multipart/form-data', 'application/x-ndjson', 'application/json; charset=utf-16', 'garbage') },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const text = fc.oneof(
    ...(valid ? [{ weight: 20, arbitrary: mutated(valid, plausible).map((b) => (form ? toForm(b as Record<string, unknown>) : path.endsWith('/import') && Array.isArray(b) ? b.map((l) => JSON.stringify(l)).join('\n') : JSON.stringify(b))) }] : []),
    { weight: 12, arbitrary: shaped.map((b) => JSON.stringify(b)) },
    { weight: 2, arbitrary: loose.map((b) => JSON.stringify(b)) },
    // Arrays of shaped objects (hits, JSON-RPC batches) and NDJSON lines of them (import).
    { weight: kind ? 3 : 1, arbitrary: fc.array(shaped, { minLength: 1, maxLength: 6 }).map((items) => (kind === 'import' ? items.map((i) => JSON.stringify(i)).join('\n') : JSON.stringify(items))) },
    { weight: 2, arbitrary: anyJson.map((b) => JSON.stringify(b) ?? '') },
    // Form bodies of the schema's (or random) fields with random values.
    { weight: form ? 30 : 1, arbitrary: shaped.map(toForm) },
    // NDJSON: lines of any JSON, some broken.
    { weight: 1, arbitrary: fc.array(fc.oneof(anyJson.map((v) => JSON.stringify(v) ?? ''), anyText), { maxLength: 5 }).map((lines) => lines.join('\n')) },
    { weight: 1, arbitrary: anyText },
    { weight: 1, arbitrary: fc.constantFrom('--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--\r\n', '{', '[', '"', '{"a":', '\u0000', '\ufeff{}') },
  );
  return fc.record({ text: fc.option(text, { nil: undefined, freq: 6 }), type: contentType });
}

function queryFor(op: Operation, c: Context): fc.Arbitrary<string> {
  const values: Record<string, string[]> = { ...QUERY_VALUES, client_id: [c.clientId, c.clientId, 'cli_x', ''] };
  const documented = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const randomValue = fc.oneof(
    { weight: 2, arbitrary: anyText.map(encodeAny) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%ED%A0%80', '%00', 'a=b', '&&', '[]') },
  );
  const valueOf = (name: string) => (values[name] ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values[name]) }, { weight: 1, arbitrary: randomValue }) : randomValue);
  // Each documented parameter present (mostly with a value it accepts) or not, sometimes twice.
  const known = fc.tuple(...documented.map((name) => fc.option(valueOf(name).map((v) => [[name, v]]), { nil: [], freq: 4 }))).map((pairs) => pairs.flat());
  const twice = fc.constantFrom(...(documented.length ? documented : ['period'])).chain((n) => valueOf(n).map((v) => [[n, v]]));
  const repeated = documented.length ? fc.oneof({ weight: 7, arbitrary: fc.constant([] as string[][]) }, { weight: 1, arbitrary: twice }) : fc.constant([] as string[][]);
  const unknown = fc.array(fc.tuple(anyText.map(encodeAny), randomValue), { maxLength: 2 });
  return fc.tuple(documented.length ? known : fc.constant([]), repeated, unknown).map(([a, b, c]) => [...a, ...b, ...c].map(([k, v]) => `${k}=${v}`).join('&'));
}

// ---------- the check ----------

interface Context {
  user: TestUser;
  domain: string;
  projectId: string;
  /** An OAuth client registered for this context (redirect https://client.example/cb). */
  clientId: string;
  /** Unused authorization codes of that client, for VERIFIER. */
  codes: string[];
  /** Real values for path parameters, by name. */
  real: Record<string, string[]>;
}

const credentials = ['none', 'read', 'write', 'session', 'stranger'] as const;
type Credential = (typeof credentials)[number];
/** Mostly the credential the operation takes (a session on session-only routes), sometimes any. */
const credentialFor = (op: Operation & { security?: Record<string, string[]>[] }) => {
  const sessionOnly = op.security?.length === 1 && 'session' in op.security[0]!;
  return fc.oneof(
    { weight: sessionOnly ? 1 : 3, arbitrary: fc.constant<Credential>('write') },
    { weight: sessionOnly ? 5 : 2, arbitrary: fc.constantFrom<Credential>(...(sessionOnly ? ['session' as const] : ['read' as const, 'session' as const])) },
    { weight: 1, arbitrary: fc.constantFrom<Credential>('none', 'stranger', 'read') },
  );
};

function tokenOf(c: Context, credential: Credential): string | undefined {
  switch (credential) {
    case 'read':
      return c.user.readKey;
    case 'write':
      return c.user.writeKey;
    case 'session':
      return c.user.session;
    case 'stranger':
      return ctx.stranger.writeKey;
    default:
      return undefined;
  }
}

/** A fresh account with a project (and a goal and a funnel in it) for one operation's runs. */
async function freshContext(): Promise<Context> {
  const { h } = ctx;
  const user = await h.user('fuzz');
  const domain = h.domain('fuzz');
  const created = await h.call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Fuzz', domain } });
  expect(created.status).toBe(201);
  const projectId = (await created.json()).id as string;
  const goal = await (await h.call('POST', `/api/v1/projects/${domain}/goals`, { token: user.writeKey, body: { name: 'G', type: 'event', value: 'signup' } })).json();
  const funnel = await (await h.call('POST', `/api/v1/projects/${domain}/funnels`, { token: user.writeKey, body: { name: 'F', steps: [{ type: 'pageview', value: '/' }, { type: 'event', value: 'signup' }] } })).json();
  await addMember(h, data.id, user, 'admin');
  const client = await (await h.call('POST', '/oauth/register', { body: { redirect_uris: ['https://client.example/cb'], client_name: 'Fuzz' } })).json();
  // Authorization codes of that client (single-use: the first good exchange of each wins).
  const challenge = await s256Challenge(VERIFIER);
  const codes = await Promise.all(
    (['read', 'write'] as const).map((scope) => createCode(h.deps.redis, { accountId: user.accountId, clientId: client.client_id, redirectUri: 'https://client.example/cb', codeChallenge: challenge, scope, resource: 'http://localhost/mcp' }, h.deps.clock.now())),
  );
  return {
    user,
    domain,
    projectId,
    clientId: client.client_id as string,
    codes,
    real: {
      domain: [domain, domain, data.domain, `www.${domain}`, domain.toUpperCase()],
      id: [goal.id, funnel.id],
      visitorId: [data.visitorId, '1', '18446744073709551615', '18446744073709551616', '0'],
      name: [`sightline-${domain}-7d-2026-01-01.csv`, 'x.csv'],
    },
  };
}

/** What is wrong with an answer, or null. */
function problem(path: string, op: Operation, status: number, type: string, text: string): string | null {
  if (status >= 500) return `status ${status}`;
  if (status < 400) return null;
  // An error the document gives only as a page (the OAuth consent screen, the share page) is HTML.
  const documented = Object.keys(op.responses[String(status)]?.content ?? {});
  if (type === 'text/html' && documented.length > 0 && !documented.includes('application/json')) return null;
  if (type !== 'application/json') return `content type ${type || 'none'} for an error`;
  try {
    const body = JSON.parse(text) as { error?: unknown; jsonrpc?: unknown };
    // The MCP endpoint speaks JSON-RPC: its errors are `{jsonrpc, error: {code, message}, id}`.
    if (path === '/mcp' && body?.jsonrpc === '2.0') return typeof (body.error as { message?: unknown })?.message === 'string' ? null : 'JSON-RPC error without a message';
    return typeof body?.error === 'string' ? null : 'error body without a string `error`';
  } catch {
    return 'error body is not JSON';
  }
}

describe('fuzzing every operation of /openapi.json', () => {
  it('no input gets a 5xx; every error is JSON { error: string }', async () => {
    const failures: string[] = [];
    const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));
    expect(operations.length).toBeGreaterThan(50);
    const ONLY = process.env.FUZZ_ONLY;
    for (const { path, method, op } of operations) {
      if (ONLY && !`${method} ${path}`.includes(ONLY)) continue;
      const c = await freshContext();
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const params = fc.tuple(...names.map((n) => hostileSegment(c.real[n] ?? ['x'])));
      const input = fc.record({ params: names.length ? params : fc.constant([] as string[]), query: queryFor(op, c), body: bodyFor(method, path, op, c), credential: credentialFor(op), extra: extraHeaders });
      const result = await fc.check(
        fc.asyncProperty(input, async ({ params, query, body, credential, extra }) => {
          let i = 0;
          const url = path.replace(/\{[^}]+\}/g, () => params[i++]!) + (query ? `?${query}` : '');
          const headers: Record<string, string> = { ...extra };
          const token = tokenOf(c, credential);
          if (token) headers.Authorization = `Bearer ${token}`;
          if (body.type && body.text !== undefined) headers['Content-Type'] = body.type;
          const sendsBody = body.text !== undefined && method !== 'GET' && method !== 'HEAD';
          const res = await ctx.h.app.request(url, { method, headers, body: sendsBody ? body.text : undefined, redirect: 'manual' });
          const text = await res.text();
          if (STATS && ONLY) console.log(method, url, res.status, text.slice(0, 100));
          if (STATS) (stats[`${method} ${path}`] ??= {})[`${res.status} ${res.status >= 400 ? text.slice(0, 60) : ''}`] = (stats[`${method} ${path}`]?.[`${res.status} ${res.status >= 400 ? text.slice(0, 60) : ''}`] ?? 0) + 1;
          const wrong = problem(path, op, res.status, (res.headers.get('content-type') ?? '').split(';')[0]!.trim(), text);
          if (wrong) throw new Error(`${method} ${url} [${credential}] ${JSON.stringify({ ...extra, 'Content-Type': headers['Content-Type'] })} ${JSON.stringify(body.text?.slice(0, 300))} → ${res.status} ${wrong}: ${text.slice(0, 300)}`);
        }),
        { numRuns: RUNS, seed: SEED },
      );
      if (result.failed) failures.push(`${method} ${path}: ${result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance)}`);
    }
    if (STATS) console.log(JSON.stringify(stats, null, 1));
    expect(failures, `seed ${SEED}`).toEqual([]);
  }, 600_000);
});
