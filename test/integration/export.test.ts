import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { buildExportCsv } from '../../src/export/build.js';
import { findProjectIdByDomain, getProject } from '../../src/projects/store.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, listen, type Harness, type TestUser } from '../helpers/harness.js';

const NOW = Date.parse('2026-05-20T15:30:00Z');
const HOUR = 3_600_000;
const at = (hoursAgo: number) => NOW - hoursAgo * HOUR;
const clock = fixedClock(NOW);

let h: Harness;
let alice: TestUser;
let bob: TestUser;
let domain: string;

/** Paths and dimension values a visitor controls, each one a spreadsheet or CSV hazard. */
const HOSTILE_PATHS = ['=SUM(A1)', '+1', '-1+2', '@cmd', '\tcalc', '\rcr', '/say "hi"', '/a,b', '/line\nbreak', '/docs#x'];

function events(): GenEvent[] {
  const out: GenEvent[] = [];
  let visitor = 1;
  // Distinct pageview counts (12, 11, …) so the ranking of hostile paths is fixed.
  HOSTILE_PATHS.forEach((path, i) => {
    for (let n = 0; n < 12 - i; n++) out.push(makeEvent({ ts: at(2 + n), path, visitor: visitor + (n % 3), session: visitor * 10 }));
    visitor += 3;
  });
  out.push(
    makeEvent({ ts: at(5), path: '/x', referrerSource: '=evil.example', browser: '@Browser', os: '-OS', countryCode: 'DE', countryName: 'Germany', visitor: 90, session: 900 }),
    makeEvent({ ts: at(6), path: '/x', referrerSource: 'news.example', browser: 'Firefox', os: 'Linux', countryCode: 'IN', countryName: 'India', visitor: 91, session: 910 }),
    makeEvent({ ts: at(6), kind: 'leave', durationMs: 30_000, visitor: 91, session: 910 }),
    // Outside 7d: must not be counted in a 7d export.
    makeEvent({ ts: at(24 * 10), path: '/old', visitor: 99, session: 990 }),
  );
  return out;
}

beforeAll(async () => {
  h = await createHarness({ clock, env: { RATE_LIMIT_EXPORT_PER_MIN: '1000' } });
  [alice, bob] = await Promise.all([h.user('alice'), h.user('bob')]);
  domain = h.domain('export');
  const res = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'Export', domain } });
  expect(res.status).toBe(201);
  await insertEvents(h.deps.rowStore, ((await res.json()) as { id: string }).id, events());
});
afterAll(closeHarness);

const exportUrl = (d: string, query = '') => `/api/v1/projects/${d}/export${query ? `?${query}` : ''}`;

const SECTIONS = [
  { title: 'overview', header: ['metric', 'value'], report: 'stats' },
  { title: 'pages', header: ['path', 'pageviews', 'visitors'], report: 'pages' },
  { title: 'referrers', header: ['referrer', 'pageviews', 'visitors'], report: 'referrers' },
  { title: 'countries', header: ['country', 'country_code', 'pageviews', 'visitors'], report: 'countries' },
  { title: 'browsers', header: ['browser', 'visitors'], report: 'browsers' },
  { title: 'operating systems', header: ['os', 'visitors'], report: 'os' },
] as const;

/** What a spreadsheet-safe CSV cell holds for a text value: a leading `'` when it could run as a formula. */
const safeText = (s: string) => (/^[=+\-@\t\r]/.test(s) ? `'${s}` : s);

/**
 * Parses an export with csv-parse (comments and blank lines skipped) and cuts the records into
 * sections at the header rows, which follow one another in contract order.
 */
function sections(text: string): Map<string, string[][]> {
  const records: string[][] = parse(text, { comment: '#', skip_empty_lines: true, relax_column_count: true });
  const out = new Map<string, string[][]>();
  let current: string[][] | null = null;
  let next = 0;
  for (const record of records) {
    const expected = SECTIONS[next];
    if (expected && record.join('\u0000') === expected.header.join('\u0000')) {
      current = [];
      out.set(expected.title, current);
      next++;
    } else {
      expect(current, `record before any header: ${JSON.stringify(record)}`).not.toBeNull();
      current!.push(record);
    }
  }
  return out;
}

async function getJson(path: string, token = alice.readKey) {
  const res = await h.call('GET', path, { token });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

describe('GET /projects/{domain}/export', () => {
  it('answers a CSV attachment named sightline-{domain}-{period}.csv', async () => {
    const res = await h.call('GET', exportUrl(domain, 'period=7d'), { token: alice.readKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="sightline-${domain}-7d.csv"`);
    expect(res.headers.get('ratelimit-policy')).toContain('"export";q=1000');
    const text = await res.text();
    const comments = text.split('\r\n').filter((l) => l.startsWith('#'));
    expect(comments.slice(0, 3)).toEqual([
      '# Sightline export',
      `# domain: ${domain}`,
      '# period: 7d (from 2026-05-14T00:00:00.000Z to 2026-05-20T15:30:00.000Z)',
    ]);
    expect(comments).toContain(`# generated: ${new Date(NOW).toISOString()}`);
    expect(comments.filter((l) => SECTIONS.some((s) => l === `# ${s.title}`))).toEqual(SECTIONS.map((s) => `# ${s.title}`));
    // Each section: blank line, comment naming it, header row.
    for (const s of SECTIONS) expect(text).toContain(`\r\n\r\n# ${s.title}\r\n${s.header.join(',')}\r\n`);
  });

  it('defaults to 30d and names it in the file', async () => {
    const res = await h.call('GET', exportUrl(domain), { token: alice.readKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="sightline-${domain}-30d.csv"`);
    expect(await res.text()).toContain('# period: 30d (from 2026-04-21T00:00:00.000Z');
  });

  it('parses cleanly and every section equals the JSON report of the same period', async () => {
    const res = await h.call('GET', exportUrl(domain, 'period=7d&limit=500'), { token: alice.readKey });
    const parsed = sections(await res.text());
    expect([...parsed.keys()]).toEqual(SECTIONS.map((s) => s.title));

    const stats = await getJson(`/api/v1/projects/${domain}/stats?period=7d`);
    expect(parsed.get('overview')).toEqual([
      ['visitors', String(stats.visitors)],
      ['pageviews', String(stats.pageviews)],
      ['sessions', String(stats.sessions)],
      ['avg_duration_seconds', stats.avgDurationSeconds === null ? '' : String(stats.avgDurationSeconds)],
      ['bounce_rate', stats.bounceRate === null ? '' : String(stats.bounceRate)],
      ['views_per_visit', stats.viewsPerVisit === null ? '' : String(stats.viewsPerVisit)],
    ]);
    expect(stats.avgDurationSeconds).toBe(30);
    expect(stats.pageviews).toBe(HOSTILE_PATHS.reduce((n, _, i) => n + 12 - i, 0) + 2);

    const pages = await getJson(`/api/v1/projects/${domain}/pages?period=7d&limit=100`);
    expect(parsed.get('pages')).toEqual(pages.data.map((r: any) => [safeText(r.path), String(r.pageviews), String(r.visitors)]));
    expect(parsed.get('pages')!.map((r) => r[0])).not.toContain('/old');

    const referrers = await getJson(`/api/v1/projects/${domain}/referrers?period=7d&limit=100`);
    expect(parsed.get('referrers')).toEqual(referrers.data.map((r: any) => [safeText(r.referrer), String(r.pageviews), String(r.visitors)]));
    expect(parsed.get('referrers')!.map((r) => r[0])).toEqual(expect.arrayContaining(['(direct)', "'=evil.example", 'news.example']));

    const countries = await getJson(`/api/v1/projects/${domain}/countries?period=7d&limit=100`);
    expect(parsed.get('countries')).toEqual(
      countries.data.map((r: any) => [safeText(r.country), r.country_code, String(r.pageviews), String(r.visitors)]),
    );
    const browsers = await getJson(`/api/v1/projects/${domain}/browsers?period=7d&limit=100`);
    expect(parsed.get('browsers')).toEqual(browsers.data.map((r: any) => [safeText(r.name), String(r.visitors)]));
    const os = await getJson(`/api/v1/projects/${domain}/os?period=7d&limit=100`);
    expect(parsed.get('operating systems')).toEqual(os.data.map((r: any) => [safeText(r.name), String(r.visitors)]));
    expect(parsed.get('operating systems')!.map((r) => r[0])).toContain("'-OS");
  });

  it('neutralizes formula cells and quotes commas, quotes, line breaks and #', async () => {
    const text = await (await h.call('GET', exportUrl(domain, 'period=7d'), { token: alice.readKey })).text();
    for (const raw of [`"'=SUM(A1)",12,`, `"'+1",11,`, `"'-1+2",10,`, `"'@cmd",9,`, `"'\tcalc",8,`, `"'\rcr",7,`,
      `"/say ""hi""",6,`, `"/a,b",5,`, `"/line\nbreak",4,`, `"/docs#x",3,`, `"'=evil.example",1,`, `"'@Browser",1`, `"'-OS",1`]) {
      expect(text).toContain(raw);
    }
    const pages = sections(text).get('pages')!;
    expect(pages.map((r) => r[0]).slice(0, HOSTILE_PATHS.length)).toEqual(HOSTILE_PATHS.map(safeText));
    // No line of the file starts a formula.
    expect(text.split(/\r\n|\n|\r/).filter((l) => /^[=+\-@\t]/.test(l))).toEqual([]);
  });

  it('limits every ranked section to `limit` rows', async () => {
    const parsed = sections(await (await h.call('GET', exportUrl(domain, 'period=7d&limit=2'), { token: alice.readKey })).text());
    expect(parsed.get('overview')).toHaveLength(6);
    for (const title of ['pages', 'referrers', 'countries', 'browsers', 'operating systems']) {
      expect(parsed.get(title), title).toHaveLength(2);
    }
    expect(parsed.get('pages')!.map((r) => r[0])).toEqual(["'=SUM(A1)", "'+1"]);
  });

  it.each([
    ['limit=0', 'limit must be an integer from 1 to 500'],
    ['limit=501', 'limit must be an integer from 1 to 500'],
    ['limit=abc', 'limit must be an integer from 1 to 500'],
    ['limit=1.5', 'limit must be an integer from 1 to 500'],
    ['period=1y', 'period must be one of: 24h, today, 7d, 30d, 90d, 6m, 12m, this_month, this_week'],
  ])('400 for %s, naming the allowed values', async (query, message) => {
    const res = await h.call('GET', exportUrl(domain, query), { token: alice.readKey });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: message });
  });

  it('401 without a valid key', async () => {
    for (const token of [undefined, 'sl_not-a-real-key']) {
      const res = await h.call('GET', exportUrl(domain), { token });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'Invalid or missing API key' });
    }
  });

  it('404 with the same body for a foreign project and an unknown domain', async () => {
    const foreign = await h.call('GET', exportUrl(domain), { token: bob.readKey });
    const unknown = await h.call('GET', exportUrl(h.domain('nobody')), { token: bob.readKey });
    for (const res of [foreign, unknown]) {
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'Project not found' });
    }
  });

  it('streams over real HTTP: chunked, section by section', async () => {
    const server = await listen(h.app);
    try {
      const res = await fetch(`${server.url}${exportUrl(domain, 'period=7d')}`, { headers: { Authorization: `Bearer ${alice.readKey}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBeNull();
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      const text = await res.text();
      expect(sections(text).size).toBe(SECTIONS.length);
    } finally {
      await server.close();
    }
  });

  it('buildExportCsv yields the preamble with the overview, then one chunk per section', async () => {
    const project = (await getProject(h.deps.redis, (await findProjectIdByDomain(h.deps.redis, domain))!))!;
    const chunks: string[] = [];
    for await (const chunk of buildExportCsv({ deps: h.deps, project, role: 'owner' }, { period: '7d', limit: 3 })) chunks.push(chunk);
    expect(chunks).toHaveLength(SECTIONS.length);
    expect(chunks[0]).toMatch(/^# Sightline export\r\n[\s\S]*\r\n\r\n# overview\r\nmetric,value\r\n/);
    SECTIONS.slice(1).forEach((s, i) => expect(chunks[i + 1]!.startsWith(`\r\n# ${s.title}\r\n`)).toBe(true));
    const viaHttp = await (await h.call('GET', exportUrl(domain, 'period=7d&limit=3'), { token: alice.readKey })).text();
    expect(chunks.join('')).toBe(viaHttp);
  });
});

describe('export rate limit', () => {
  it('429 "Too many requests" with rate-limit headers past RATE_LIMIT_EXPORT_PER_MIN', async () => {
    const tight = await createHarness({ clock, env: { RATE_LIMIT_EXPORT_PER_MIN: '2' } });
    const carol = await tight.user('carol');
    const d = tight.domain('limited');
    expect((await tight.call('POST', '/api/v1/projects', { token: carol.writeKey, body: { name: 'Limited', domain: d } })).status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const ok = await tight.call('GET', exportUrl(d), { token: carol.readKey });
      expect(ok.status).toBe(200);
      await ok.text();
    }
    const limited = await tight.call('GET', exportUrl(d), { token: carol.readKey });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: 'Too many requests' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-policy')).toContain('"export";q=2;w=60');
    // Other routes keep working: the export has its own limit on top of the API limit.
    expect((await tight.call('GET', `/api/v1/projects/${d}/stats`, { token: carol.readKey })).status).toBe(200);
    // A different key of the same account is counted on its own.
    expect((await tight.call('GET', exportUrl(d), { token: carol.writeKey })).status).toBe(200);
  });
});
