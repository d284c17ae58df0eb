import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { runQuestion } from '../../src/analysis/run.js';
import { resolvePeriod } from '../../src/reports/periods.js';
import { closeHarness, createHarness, type Harness } from '../helpers/harness.js';

/**
 * Visits sent to POST /api/event as the browser tracker (src/tracker/tracker.js) sends them:
 * a pageview carries the page URL and `referrer` (document.referrer on a hard navigation, the
 * previous URL on an SPA one), custom events and leaves carry only the current URL. Only the
 * landing pageview has an external referrer; ingest records the later ones as '(direct)', so
 * these tests show that the visit, not the event, is what the analysis attributes.
 */
const CHROME_MAC =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

const START = Date.parse('2026-03-08T12:00:00Z');
const clock = fixedClock(START);
let h: Harness;
let site: string;
let domain: string;

/** One browser: its address and user agent, fixed for every event it sends (so one visitor, one session). */
function browser(ip: string, userAgent: string) {
  return async (body: Record<string, unknown>) => {
    // A few seconds between the tracker's calls: events of a visit never share a timestamp.
    clock.advance(2_000);
    const res = await h.app.request('/api/event', {
      method: 'POST',
      // The tracker sends a string body, so text/plain (no CORS preflight).
      headers: { 'Content-Type': 'text/plain;charset=UTF-8', 'User-Agent': userAgent, 'X-Forwarded-For': ip },
      body: JSON.stringify({ site, ...body }),
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-sightline-dropped')).toBeNull();
  };
}

const unique = () => `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

beforeAll(async () => {
  h = await createHarness({ clock, env: { TRUST_PROXY: '1' } });
  const user = await h.user('tracker-visits');
  domain = h.domain('trk');
  const created = await h.call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Tracker visits', domain, timeZone: 'UTC' } });
  expect(created.status).toBe(201);
  site = ((await created.json()) as { id: string }).id;

  // Visit 1: from a Google search to a UTM-tagged landing page, two hard navigations, a custom event, leaves on each page.
  const landing = `https://${domain}/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring`;
  const a = browser(unique(), CHROME_MAC);
  await a({ kind: 'pageview', url: landing, referrer: 'https://www.google.com/search?q=sightline', screenWidth: 1440 });
  await a({ kind: 'leave', url: landing, durationMs: 10_000 });
  await a({ kind: 'pageview', url: `https://${domain}/docs`, referrer: landing, screenWidth: 1440 });
  await a({ kind: 'custom', url: `https://${domain}/docs`, name: 'Signup', props: { plan: 'pro' } });
  await a({ kind: 'leave', url: `https://${domain}/docs`, durationMs: 5_000 });
  await a({ kind: 'pageview', url: `https://${domain}/blog/post-1`, referrer: `https://${domain}/docs`, screenWidth: 1440 });
  await a({ kind: 'leave', url: `https://${domain}/blog/post-1`, durationMs: 20_000 });

  // Visit 2: one page from Hacker News, then gone: a bounce.
  const b = browser(unique(), IPHONE);
  await b({ kind: 'pageview', url: `https://${domain}/`, referrer: 'https://news.ycombinator.com/item?id=1', screenWidth: 390 });
  await b({ kind: 'leave', url: `https://${domain}/`, durationMs: 7_000 });

  // Visit 3: from t.co to the www subdomain, then an SPA navigation (the previous URL is the
  // referrer; without data-hash the tracker sends URLs without their #fragment).
  const c = browser(unique(), FIREFOX_LINUX);
  await c({ kind: 'pageview', url: `https://www.${domain}/blog/post-2`, referrer: 'https://t.co/abc', screenWidth: 1280 });
  await c({ kind: 'leave', url: `https://www.${domain}/blog/post-2`, durationMs: 3_000 });
  await c({ kind: 'pageview', url: `https://www.${domain}/pricing`, referrer: `https://www.${domain}/blog/post-2`, screenWidth: 1280 });
  await c({ kind: 'leave', url: `https://www.${domain}/pricing`, durationMs: 4_000 });

  await h.deps.sink.flush();
});
afterAll(closeHarness);

const today = () => resolvePeriod('today', 'UTC', clock.now());
const ask = (q: Parameters<typeof runQuestion>[3]) => runQuestion(h.deps, site, today(), q);

describe('visits sent as the tracker sends them, read through the analysis pipeline', () => {
  it('ingest stored the later pageviews as (direct): the attribution below is the visit’s, not the event’s', async () => {
    const rs = await h.deps.clickhouse.query({
      query: "SELECT path, referrer_source FROM events WHERE project_id = {id:String} AND kind = 'pageview' ORDER BY ts",
      query_params: { id: site },
      format: 'JSONEachRow',
    });
    expect(await rs.json()).toEqual([
      { path: '/pricing', referrer_source: 'google.com' },
      { path: '/docs', referrer_source: '(direct)' },
      { path: '/blog/post-1', referrer_source: '(direct)' },
      { path: '/', referrer_source: 'news.ycombinator.com' },
      { path: '/blog/post-2', referrer_source: 't.co' },
      { path: '/pricing', referrer_source: '(direct)' },
    ]);
  });

  it('per visit: source, entry and exit page, bounce, views per visit, duration', async () => {
    const rows = await ask({
      metrics: ['sessions', 'pageviews', 'events', 'bounceRate', 'viewsPerVisit', 'avgDurationSeconds'],
      dimensions: ['entryPage', 'exitPage', 'source'],
      filters: [],
    });
    const ordered = [...rows].sort((x, y) => String(x.entryPage).localeCompare(String(y.entryPage)));
    expect(ordered).toEqual([
      { entryPage: '/', exitPage: '/', source: 'news.ycombinator.com', sessions: 1, pageviews: 1, events: 0, bounceRate: 1, viewsPerVisit: 1, avgDurationSeconds: 7 },
      { entryPage: '/blog/post-2', exitPage: '/pricing', source: 't.co', sessions: 1, pageviews: 2, events: 0, bounceRate: 0, viewsPerVisit: 2, avgDurationSeconds: 7 },
      { entryPage: '/pricing', exitPage: '/blog/post-1', source: 'google.com', sessions: 1, pageviews: 3, events: 1, bounceRate: 0, viewsPerVisit: 3, avgDurationSeconds: 35 },
    ]);
  });

  it('the channel is the visit’s: the campaign’s source and medium win over the search referrer', async () => {
    const rows = await ask({ metrics: ['sessions', 'pageviews'], dimensions: ['channel', 'entryPage'], filters: [] });
    expect(rows).toEqual([
      { channel: 'Email', entryPage: '/pricing', sessions: 1, pageviews: 3 },
      { channel: 'Organic Social', entryPage: '/', sessions: 1, pageviews: 1 },
      { channel: 'Organic Social', entryPage: '/blog/post-2', sessions: 1, pageviews: 2 },
    ]);
    const direct = await ask({ metrics: ['pageviews'], dimensions: [], filters: [{ op: 'is', dimension: 'channel', values: ['Direct'] }] });
    expect(direct).toEqual([{ pageviews: 0 }]);
  });

  it('the UTM values of the landing URL are the visit’s', async () => {
    const rows = await ask({ metrics: ['sessions', 'pageviews'], dimensions: ['utmSource', 'utmMedium'], filters: [] });
    expect(rows).toEqual([{ utmSource: 'newsletter', utmMedium: 'email', sessions: 1, pageviews: 3 }]);
    const campaign = await ask({ metrics: ['pageviews'], dimensions: ['utmCampaign', 'entryPage'], filters: [] });
    expect(campaign).toEqual([{ utmCampaign: 'spring', entryPage: '/pricing', pageviews: 3 }]);
  });

  it('no pageview of these visits is attributed to (direct)', async () => {
    const bySource = await ask({ metrics: ['pageviews', 'sessions'], dimensions: ['source'], filters: [] });
    expect(bySource).toEqual([
      { source: 'google.com', pageviews: 3, sessions: 1 },
      { source: 't.co', pageviews: 2, sessions: 1 },
      { source: 'news.ycombinator.com', pageviews: 1, sessions: 1 },
    ]);
    const direct = await ask({ metrics: ['pageviews', 'sessions'], dimensions: [], filters: [{ op: 'is', dimension: 'source', values: ['(direct)'] }] });
    expect(direct).toEqual([{ pageviews: 0, sessions: 0 }]);
    // Each page, with the source of the visit it was seen in (ties in pageviews: by page, then source).
    const pages = await ask({ metrics: ['pageviews'], dimensions: ['page', 'source'], filters: [] });
    expect(pages).toEqual([
      { page: '/', source: 'news.ycombinator.com', pageviews: 1 },
      { page: '/blog/post-1', source: 'google.com', pageviews: 1 },
      { page: '/blog/post-2', source: 't.co', pageviews: 1 },
      { page: '/docs', source: 'google.com', pageviews: 1 },
      { page: '/pricing', source: 'google.com', pageviews: 1 },
      { page: '/pricing', source: 't.co', pageviews: 1 },
    ]);
  });

  it('an event-level filter keeps events, visit metrics still read the whole visit', async () => {
    const rows = await ask({ metrics: ['pageviews', 'sessions', 'viewsPerVisit', 'avgDurationSeconds'], dimensions: ['source'], filters: [{ op: 'is', dimension: 'page', values: ['/docs'] }] });
    expect(rows).toEqual([{ source: 'google.com', pageviews: 1, sessions: 1, viewsPerVisit: 3, avgDurationSeconds: 35 }]);
    const signups = await ask({ metrics: ['events', 'visitors'], dimensions: ['prop:plan', 'entryPage'], filters: [{ op: 'is', dimension: 'event', values: ['Signup'] }] });
    expect(signups).toEqual([{ 'prop:plan': 'pro', entryPage: '/pricing', events: 1, visitors: 1 }]);
  });

  it('a visit-level filter keeps every event of the matching visits', async () => {
    const rows = await ask({ metrics: ['pageviews', 'events', 'bounceRate'], dimensions: ['page'], filters: [{ op: 'contains', dimension: 'source', values: ['GOOGLE'] }] });
    expect(rows).toEqual([
      { page: '/blog/post-1', pageviews: 1, events: 0, bounceRate: 0 },
      { page: '/docs', pageviews: 1, events: 1, bounceRate: 0 },
      { page: '/pricing', pageviews: 1, events: 0, bounceRate: 0 },
    ]);
  });
});
