import { parse } from 'csv-parse/sync';
import { Hono } from 'hono';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import type { AppEnv } from '../../src/deps.js';
import { errorResponse } from '../../src/errors.js';
import type { ReportDefinition } from '../../src/reports/definition.js';
import { reports } from '../../src/reports/registry.js';
import { respond } from '../../src/reports/respond.js';
import { insertEvents, makeEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

const NOW = Date.parse('2026-05-20T15:30:00Z');
const HOUR = 3_600_000;
const at = (hoursAgo: number) => NOW - hoursAgo * HOUR;

let h: Harness;
let alice: TestUser;
let domain: string;

beforeAll(async () => {
  h = await createHarness({ clock: fixedClock(NOW) });
  alice = await h.user('alice');
  domain = h.domain('csv');
  const res = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'CSV', domain } });
  expect(res.status).toBe(201);
  await insertEvents(h.deps.rowStore, ((await res.json()) as { id: string }).id, [
    makeEvent({ ts: at(1), path: '=cmd|calc', visitor: 1, session: 10 }),
    makeEvent({ ts: at(2), path: '=cmd|calc', visitor: 2, session: 20 }),
    makeEvent({ ts: at(3), path: '/a,"b"', visitor: 3, session: 30, browser: '+Browser', referrerSource: '@ref.example' }),
    makeEvent({ ts: at(4), path: '/', visitor: 4, session: 40, os: '-OS', countryCode: 'IN', countryName: 'India', city: 'Mumbai' }),
    makeEvent({ ts: at(4), kind: 'leave', durationMs: 12_000, visitor: 4, session: 40 }),
    makeEvent({ ts: at(5), kind: 'custom', eventName: '=signup', visitor: 1 }),
    makeEvent({ ts: at(5), kind: 'transaction', eventName: 'purchase', amountCents: 1999, currency: 'USD', visitor: 2 }),
  ]);
});
afterAll(closeHarness);

const safeText = (s: string) => (/^[=+\-@\t\r]/.test(s) ? `'${s}` : s);
/** The text a CSV parser gives back for a cell value written by the export. */
const parsedCell = (value: unknown) =>
  value === null || value === undefined ? '' : typeof value === 'string' ? safeText(value) : String(value);

async function fetchReport(path: string, accept?: string) {
  return h.call('GET', `/api/v1/projects/${domain}/${path}`, { token: alice.readKey, headers: accept ? { Accept: accept } : {} });
}

const periodReports = reports.filter((r) => !r.params && r.csv);

describe('Accept: text/csv on report routes', () => {
  it('covers the core reports', () => {
    expect(periodReports.map((r) => r.name)).toEqual(expect.arrayContaining(['stats', 'timeseries', 'pages', 'referrers', 'countries', 'browsers', 'os']));
  });

  it.each(periodReports.map((r) => [r.name, r] as const))('%s answers one CSV section equal to its JSON', async (_name, def: ReportDefinition) => {
    const route = def.path.replace('/:domain/', '');
    const jsonRes = await fetchReport(`${route}?period=7d`);
    expect(jsonRes.status).toBe(200);
    const json = await jsonRes.json();

    const res = await fetchReport(`${route}?period=7d`, 'text/csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const text = await res.text();
    const csv = def.csv!;
    expect(text.startsWith(`# ${csv.title}\r\n${csv.columns.map((c) => c.header).join(',')}\r\n`)).toBe(true);
    // One section: exactly one comment line.
    expect(text.split('\r\n').filter((l) => l.startsWith('# '))).toEqual([`# ${csv.title}`]);
    const [header, ...rows] = parse(text, { comment: '#', skip_empty_lines: true }) as string[][];
    expect(header).toEqual(csv.columns.map((c) => c.header));
    expect(rows).toEqual(csv.rows(json).map((row) => csv.columns.map((c) => parsedCell(c.value(row)))));
  });

  it('pages: path,pageviews,visitors with hostile paths neutralized and quoted', async () => {
    const text = await (await fetchReport('pages?period=7d&limit=3', 'text/csv')).text();
    expect(text).toBe(`# pages\r\npath,pageviews,visitors\r\n"'=cmd|calc",2,2\r\n/,1,1\r\n"/a,""b""",1,1\r\n`);
  });

  it('stats: the overview section with the average duration', async () => {
    const text = await (await fetchReport('stats?period=24h', 'text/csv')).text();
    expect(parse(text, { comment: '#' })).toEqual([
      ['metric', 'value'], ['visitors', '4'], ['pageviews', '4'], ['sessions', '4'], ['avg_duration_seconds', '12'], ['bounce_rate', '0.5'], ['views_per_visit', '1'],
    ]);
  });

  it.each([
    ['text/csv', 'csv'],
    ['text/csv, */*;q=0.1', 'csv'],
    ['text/*', 'csv'],
    ['application/json, text/csv', 'json'],
    ['text/csv;q=0.5, application/json', 'json'],
    ['*/*', 'json'],
    ['', 'json'],
  ])('Accept %j → %s', async (accept, kind) => {
    const res = await fetchReport('browsers?period=7d', accept || undefined);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain(kind === 'csv' ? 'text/csv' : 'application/json');
  });

  it('errors stay JSON when CSV was asked for', async () => {
    const bad = await fetchReport('pages?limit=0', 'text/csv');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'limit must be an integer from 1 to 100' });
    const missing = await h.call('GET', `/api/v1/projects/${h.domain('none')}/pages`, { token: alice.readKey, headers: { Accept: 'text/csv' } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'Project not found' });
  });
});

describe('respond() for a report without a CSV form', () => {
  // Every registered report has a CSV form today, so a minimal definition stands in for one without.
  const bare: ReportDefinition = {
    name: 'bare', path: '/:domain/bare', summary: 'no CSV', query: v.object({}), response: v.object({ n: v.number() }),
    run: async () => ({ n: 1 }),
  };
  const app = new Hono<AppEnv>();
  app.onError((err, c) => errorResponse(c, err));
  app.get('/bare', (c) => respond(c, bare, { n: 1 }));

  it('406 with CSV requested, JSON otherwise', async () => {
    const csv = await app.request('/bare', { headers: { Accept: 'text/csv' } });
    expect(csv.status).toBe(406);
    expect(await csv.json()).toEqual({ error: 'CSV is not available for this report' });
    const json = await app.request('/bare');
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ n: 1 });
  });
});
