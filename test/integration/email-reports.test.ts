import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { createApp } from '../../src/app.js';
import { countryName } from '../../src/ingest/enrich/countries.js';
import { runDueEmailReports } from '../../src/jobs/scheduled-email-reports.js';
import { runScheduledJobs } from '../../src/jobs/scheduled.js';
import { REPORTS_DUE_KEY } from '../../src/notify/email-report-store.js';
import { smtpMailer } from '../../src/notify/smtp-mailer.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import { addMember, seededRandom } from '../helpers/report-fixtures.js';
import { headerValue, startSmtpSink, type ReceivedMail, type SmtpSink } from '../helpers/smtp-sink.js';

/*
 * The project lives in Europe/Berlin (UTC+1 until 2026-03-29, then +2). "Now" is Wednesday
 * 2026-03-11; the last whole week is Monday 2026-03-02 00:00 to Monday 2026-03-09 00:00 Berlin
 * time, i.e. [2026-03-01T23:00Z, 2026-03-08T23:00Z), and the week before starts 2026-02-22T23:00Z.
 * These bounds are written here by hand, not computed by the code under test.
 */
const NOW = Date.parse('2026-03-11T10:00:00Z');
const WEEK = { from: Date.parse('2026-03-01T23:00:00Z'), to: Date.parse('2026-03-08T23:00:00Z') };
const PREVIOUS = { from: Date.parse('2026-02-22T23:00:00Z'), to: WEEK.from };
const MIN = 60_000;
const HOUR = 60 * MIN;
const FAST_RETRIES = [10, 10];
const MINUS = '\u2212';

interface Line {
  timestamp: string;
  kind: 'pageview' | 'leave' | 'custom';
  visitorId: string;
  sessionId: string;
  url: string;
  referrer?: string;
  countryCode?: string;
  name?: string;
  durationMs?: number;
}

const clock = fixedClock(NOW);
let h: Harness;
let sink: SmtpSink;
let owner: TestUser;
let admin: TestUser;
let member: TestUser;
let domain: string;
let projectId: string;
const lines: Line[] = [];
const recipients = ['ceo@reports.example', 'growth@reports.example'];

const PATHS = ['/', '/pricing', '/blog/hello', '/blog/<b>&"quotes"', '/docs/start', '/about', '/careers'];
const REFERRERS: (string | undefined)[] = [undefined, 'https://www.google.com/search?q=x', 'https://news.ycombinator.com/item?id=1', 'https://twitter.com/x', 'https://duckduckgo.com/'];
const COUNTRIES = ['DE', 'US', 'FR', 'GB', 'NL', 'SE', ''];

/** Sessions of 1–4 pageviews a minute apart, some with a signup and leave durations, starting at `start`. */
function addSessions(rand: ReturnType<typeof seededRandom>, label: string, count: number, span: { from: number; to: number }) {
  for (let i = 0; i < count; i++) {
    const visitor = `${label}-v${rand.int(1, Math.ceil(count * 0.7))}`;
    const session = `${label}-s${i}`;
    const start = span.from + rand.int(0, Math.floor((span.to - span.from - 30 * MIN) / MIN)) * MIN;
    const referrer = rand.pick(REFERRERS);
    const country = rand.pick(COUNTRIES);
    const base = { visitorId: visitor, sessionId: session, ...(country ? { countryCode: country } : {}) };
    const views = rand.int(1, 4);
    for (let p = 0; p < views; p++) {
      const path = rand.pick(PATHS);
      const at = start + p * 2 * MIN;
      lines.push({ ...base, kind: 'pageview', timestamp: new Date(at).toISOString(), url: `https://${domain}${path}`, ...(referrer ? { referrer } : {}) });
      if (rand.next() < 0.6) lines.push({ ...base, kind: 'leave', timestamp: new Date(at + MIN).toISOString(), url: `https://${domain}${path}`, durationMs: rand.int(1, 90) * 1000 });
    }
    if (rand.next() < 0.3) lines.push({ ...base, kind: 'custom', name: 'signup', timestamp: new Date(start + MIN).toISOString(), url: `https://${domain}/pricing` });
  }
}

/* ----------------------------------------------------------- the independent computation */

const inSpan = (span: { from: number; to: number }) => lines.filter((l) => Date.parse(l.timestamp) >= span.from && Date.parse(l.timestamp) < span.to);

function sourceOf(referrer: string | undefined): string {
  if (!referrer) return '(direct)';
  return new URL(referrer).hostname.replace(/^www\./, '');
}

function expected(span: { from: number; to: number }) {
  const events = inSpan(span);
  const views = events.filter((e) => e.kind === 'pageview');
  const sessions = new Map<string, { views: number; customs: number; leaves: number; duration: number }>();
  for (const e of events) {
    const s = sessions.get(e.sessionId) ?? { views: 0, customs: 0, leaves: 0, duration: 0 };
    if (e.kind === 'pageview') s.views++;
    if (e.kind === 'custom') s.customs++;
    if (e.kind === 'leave') {
      s.leaves++;
      s.duration += e.durationMs!;
    }
    sessions.set(e.sessionId, s);
  }
  const withView = [...sessions.values()].filter((s) => s.views > 0);
  // Per-visit duration counts visits with a pageview, custom or transaction event in the span (README "Analysis").
  const withLeave = [...sessions.values()].filter((s) => s.leaves > 0 && s.views + s.customs > 0);
  const rank = (key: (e: Line) => string | null) => {
    const rows = new Map<string, { views: number; visitors: Set<string> }>();
    for (const e of views) {
      const k = key(e);
      if (k === null) continue;
      const r = rows.get(k) ?? { views: 0, visitors: new Set<string>() };
      r.views++;
      r.visitors.add(e.visitorId);
      rows.set(k, r);
    }
    return [...rows.entries()]
      .sort((a, b) => b[1].views - a[1].views || (a[0] < b[0] ? -1 : 1))
      .slice(0, 5)
      .map(([name, r]) => ({ name, visitors: r.visitors.size, pageviews: r.views }));
  };
  const visitors = new Set(views.map((e) => e.visitorId)).size;
  const signups = new Set(events.filter((e) => e.kind === 'custom' && e.name === 'signup').map((e) => e.visitorId)).size;
  const pricing = new Set(views.filter((e) => new URL(e.url).pathname.startsWith('/pricing')).map((e) => e.visitorId)).size;
  return {
    visitors,
    pageviews: views.length,
    sessions: new Set(views.map((e) => e.sessionId)).size,
    bounceRate: withView.length ? withView.filter((s) => s.views === 1 && s.customs === 0).length / withView.length : null,
    duration: withLeave.length ? withLeave.reduce((n, s) => n + s.duration, 0) / withLeave.length / 1000 : null,
    pages: rank((e) => new URL(e.url).pathname),
    sources: rank((e) => sourceOf(e.referrer)),
    countries: rank((e) => (e.countryCode ? countryName(e.countryCode) : null)),
    goals: { Signup: signups, 'Pricing<page>': pricing },
  };
}

const pct = (c: number, p: number) => {
  if (p === 0) return c === 0 ? '0%' : 'new';
  const n = Math.round(((c - p) / p) * 100);
  return n > 0 ? `+${n}%` : n < 0 ? `${MINUS}${-n}%` : '0%';
};
const seconds = (s: number) => {
  const r = Math.round(s);
  return r < 60 ? `${r}s` : `${Math.floor(r / 60)}m ${String(r % 60).padStart(2, '0')}s`;
};

/* ----------------------------------------------------------- reading the email */

function metricLine(text: string, label: string): [string, string] {
  const m = new RegExp(`^${label}\\s{2,}(\\S+(?: \\S+)?)\\s{2,}(\\S+(?: pp)?)$`, 'm').exec(text);
  if (!m) throw new Error(`no "${label}" line in:\n${text}`);
  return [m[1]!, m[2]!];
}

function listAfter(text: string, heading: string): { name: string; visitors: number; pageviews: number }[] {
  const block = text.split(`${heading} (visitors, pageviews)\n`)[1]?.split('\n\n')[0] ?? '';
  return block
    .split('\n')
    .filter(Boolean)
    .map((row) => {
      const m = /^ {2}(.+?)\s+(\d+)\s+(\d+)$/.exec(row)!;
      return { name: m[1]!, visitors: Number(m[2]), pageviews: Number(m[3]) };
    });
}

const path = (rest = '') => `/api/v1/projects/${domain}/email-reports${rest}`;
const mine = (m: ReceivedMail) => m.to.some((t) => recipients.includes(t));

beforeAll(async () => {
  sink = await startSmtpSink();
  h = await createHarness({
    clock,
    env: { PUBLIC_URL: 'https://stats.example.test', RATE_LIMIT_EXPORT_PER_MIN: '1000' },
    mailer: smtpMailer(sink.url, 'Sightline Reports <reports@stats.example.test>'),
  });
  [owner, admin, member] = await Promise.all([h.user('er-owner'), h.user('er-admin'), h.user('er-member')]);
  domain = h.domain('mail');
  const created = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Mail', domain, timeZone: 'Europe/Berlin' } });
  expect(created.status).toBe(201);
  projectId = ((await created.json()) as { id: string }).id;
  await addMember(h, projectId, admin, 'admin');
  await addMember(h, projectId, member, 'member');
  for (const goal of [{ name: 'Signup', type: 'event', value: 'signup' }, { name: 'Pricing<page>', type: 'pageview', value: '/pricing*' }]) {
    expect((await h.call('POST', `/api/v1/projects/${domain}/goals`, { token: owner.writeKey, body: goal })).status).toBe(201);
  }

  const rand = seededRandom(15);
  addSessions(rand, 'cur', 60, WEEK);
  addSessions(rand, 'prev', 40, PREVIOUS);
  addSessions(rand, 'old', 10, { from: PREVIOUS.from - 7 * 24 * HOUR, to: PREVIOUS.from });
  addSessions(rand, 'late', 10, { from: WEEK.to, to: NOW - HOUR });
  // Either side of the week's first instant: 23:50 Berlin on Sunday belongs to the week before, 00:10 on Monday to the week.
  for (const [label, at] of [['edge-before', WEEK.from - 10 * MIN], ['edge-after', WEEK.from + 10 * MIN]] as const) {
    lines.push({ kind: 'pageview', visitorId: label, sessionId: label, timestamp: new Date(at).toISOString(), url: `https://${domain}/edge`, countryCode: 'DE' });
  }
  const res = await h.call('POST', `/api/v1/projects/${domain}/import`, {
    token: owner.writeKey,
    body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
    headers: { 'Content-Type': 'application/x-ndjson' },
  });
  expect(await res.json()).toMatchObject({ imported: lines.length, rejected: 0 });
});

afterAll(async () => {
  if (projectId) await h.deps.redis.zrem(REPORTS_DUE_KEY, projectId);
  await sink?.close();
  await closeHarness();
});

describe('email report settings', () => {
  it('refuses read keys (403), members and strangers (404), bad bodies (400 naming the field)', async () => {
    const body = { frequency: 'weekly', recipients };
    expect((await h.call('PUT', path(), { token: owner.readKey, body })).status).toBe(403);
    const asMember = await h.call('PUT', path(), { token: member.writeKey, body });
    expect(asMember.status).toBe(404);
    expect(await asMember.json()).toEqual({ error: 'Project not found' });
    const stranger = await h.user('er-stranger');
    expect((await h.call('GET', path(), { token: stranger.writeKey })).status).toBe(404);
    expect((await h.call('POST', path('/send'), { token: member.writeKey })).status).toBe(404);

    const bad = async (b: unknown) => (await (await h.call('PUT', path(), { token: owner.writeKey, body: b })).json()) as { error: string };
    expect(await bad({ frequency: 'daily', recipients })).toEqual({ error: 'frequency must be one of: weekly, monthly' });
    expect(await bad({ frequency: 'weekly', recipients: [] })).toEqual({ error: 'recipients must be a list of 1 to 20 email addresses' });
    expect(await bad({ frequency: 'weekly', recipients: 'a@b.example' })).toEqual({ error: 'recipients must be a list of 1 to 20 email addresses' });
    expect(await bad({ frequency: 'weekly', recipients: Array.from({ length: 21 }, (_, i) => `r${i}@x.example`) })).toEqual({ error: 'recipients must be a list of 1 to 20 email addresses' });
    expect(await bad({ frequency: 'weekly', recipients: ['ok@x.example', 'not-an-address'] })).toEqual({ error: 'recipients: "not-an-address" is not an email address' });
    expect(await bad({ frequency: 'weekly', recipients: ['a@x.example\r\nBcc: evil@x.example'] })).toEqual({ error: expect.stringMatching(/^recipients: .* is not an email address$/) });
    const missing = await h.call('GET', path(), { token: owner.writeKey });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'No email report for this project' });
  });

  it('creates (201) and replaces (200) the report; an admin may manage it; addresses are normalized', async () => {
    const created = await h.call('PUT', path(), { token: admin.writeKey, body: { frequency: 'monthly', recipients: [' CEO@Reports.example ', 'ceo@reports.example'] } });
    expect(created.status).toBe(201);
    // Next send: the 1st of April, 08:00 Berlin (summer time from 29 March: UTC+2).
    expect(await created.json()).toMatchObject({ frequency: 'monthly', recipients: ['ceo@reports.example'], nextRunAt: '2026-04-01T06:00:00.000Z', lastSentAt: null });
    const replaced = await h.call('PUT', path(), { token: owner.writeKey, body: { frequency: 'weekly', recipients } });
    expect(replaced.status).toBe(200);
    // Next Monday, 16 March, 08:00 Berlin (UTC+1).
    expect(await replaced.json()).toMatchObject({ frequency: 'weekly', recipients, nextRunAt: '2026-03-16T07:00:00.000Z' });
    expect(await (await h.call('GET', path(), { token: admin.session })).json()).toMatchObject({ frequency: 'weekly', recipients });
  });
});

describe('the email', () => {
  let messages: ReceivedMail[];

  it('goes to every recipient on "send now", with the last whole week', async () => {
    const res = await h.call('POST', path('/send'), { token: owner.writeKey });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ frequency: 'weekly', from: new Date(WEEK.from).toISOString(), to: new Date(WEEK.to).toISOString(), sent: recipients, failed: [] });
    messages = await sink.waitFor(mine, 2);
    expect(messages.map((m) => m.to).flat().sort()).toEqual(recipients);
    for (const m of messages) {
      expect(m.from).toBe('reports@stats.example.test');
      expect(m.parsed.subject).toBe(`Weekly report for ${domain} (Mar 2 – Mar 8, 2026)`);
    }
  });

  it('carries the numbers of the imported events, with their change vs the week before (text part)', () => {
    const text = messages[0]!.parsed.text!;
    const now = expected(WEEK);
    const before = expected(PREVIOUS);
    expect(text).toContain('Mar 2 – Mar 8, 2026 (Europe/Berlin), compared with the week before');
    expect(metricLine(text, 'Visitors')).toEqual([String(now.visitors), pct(now.visitors, before.visitors)]);
    expect(metricLine(text, 'Pageviews')).toEqual([String(now.pageviews), pct(now.pageviews, before.pageviews)]);
    expect(metricLine(text, 'Sessions')).toEqual([String(now.sessions), pct(now.sessions, before.sessions)]);
    const pp = Math.round(now.bounceRate! * 100) - Math.round(before.bounceRate! * 100);
    expect(metricLine(text, 'Bounce rate')).toEqual([`${Math.round(now.bounceRate! * 100)}%`, pp > 0 ? `+${pp} pp` : pp < 0 ? `${MINUS}${-pp} pp` : '0 pp']);
    expect(metricLine(text, 'Visit duration')).toEqual([seconds(now.duration!), pct(now.duration!, before.duration!)]);
    expect(listAfter(text, 'Top pages')).toEqual(now.pages);
    expect(listAfter(text, 'Top sources')).toEqual(now.sources);
    expect(listAfter(text, 'Top countries')).toEqual(now.countries);
    const goals = text.split('Goals (conversions, conversion rate)\n')[1]!.split('\n\n')[0]!.split('\n');
    const goalRows = Object.entries(now.goals)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([name, n]) => [name, String(n), `${Math.round((n / now.visitors) * 100)}%`, pct(n, before.goals[name as 'Signup'])]);
    expect(goals.map((g) => g.trim().split(/\s{2,}|\s(?=\S+$)/))).toEqual(goalRows);
    expect(text).toContain(`Open the dashboard: https://stats.example.test/#/p/${domain}`);
  });

  it('has an HTML part of tables and inline styles, dark-mode aware, without scripts, with the same numbers', () => {
    const html = messages[0]!.parsed.html as string;
    const now = expected(WEEK);
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<meta name="color-scheme" content="light dark">');
    expect(html).toContain('@media (prefers-color-scheme: dark)');
    expect(html).toContain('<table role="presentation"');
    expect(html).not.toMatch(/<script|javascript:|<link |<img /i);
    // Names with markup characters arrive escaped: a goal name, and a path's `&` (the URL parser already encoded its `<>"`).
    expect(html).toContain('>Pricing&lt;page&gt;</td>');
    expect(html).not.toContain('Pricing<page>');
    expect(now.pages.map((p) => p.name)).toContain('/blog/%3Cb%3E&%22quotes%22');
    expect(html).toContain('>/blog/%3Cb%3E&amp;%22quotes%22</td>');
    expect(html).toContain(`>${now.visitors}</td>`);
    expect(html).toContain(`>${now.pageviews}</td>`);
    expect(html).toContain(`href="https://stats.example.test/#/p/${domain}"`);
    for (const p of now.pages) expect(html).toContain(`>${p.pageviews}</td>`);
  });

  it('offers a one-click unsubscribe (RFC 8058) whose signed link really removes that recipient', async () => {
    const growth = messages.find((m) => m.to.includes('growth@reports.example'))!;
    expect(headerValue(growth.parsed, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const link = /^<(https:\/\/stats\.example\.test\/email-reports\/unsubscribe\?token=[^>]+)>$/.exec(headerValue(growth.parsed, 'List-Unsubscribe') ?? '')?.[1];
    expect(link).toBeDefined();
    expect(growth.parsed.text).toContain(`Unsubscribe: ${link}`);
    expect(growth.parsed.html).toContain(`href="${link!.replace(/&/g, '&amp;')}"`);
    const local = link!.replace('https://stats.example.test', '');

    // GET only shows the confirm page: link scanners must not unsubscribe anyone.
    const page = await h.app.request(local);
    expect(page.status).toBe(200);
    const pageText = await page.text();
    expect(pageText).toContain('growth@reports.example');
    expect(pageText).toContain('<form method="post"');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect((await (await h.call('GET', path(), { token: owner.writeKey })).json()).recipients).toEqual(recipients);

    // A tampered token is refused and changes nothing.
    const token = new URL(link!).searchParams.get('token')!;
    const forged = await h.app.request(`/email-reports/unsubscribe?token=${encodeURIComponent(token.slice(0, -2) + (token.endsWith('A') ? 'BB' : 'AA'))}`, { method: 'POST' });
    expect(forged.status).toBe(400);
    expect((await h.app.request('/email-reports/unsubscribe', { method: 'POST' })).status).toBe(400);

    // The one-click POST, as a mail client sends it, without any credential.
    const post = await h.app.request(local, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(post.status).toBe(200);
    expect(await post.text()).toContain('growth@reports.example will no longer get the email report');
    expect((await (await h.call('GET', path(), { token: owner.writeKey })).json()).recipients).toEqual(['ceo@reports.example']);
    // Again: still fine (idempotent), and the page now says so.
    expect((await h.app.request(local, { method: 'POST' })).status).toBe(200);
    expect(await (await h.app.request(local)).text()).toContain('Not subscribed');
  });
});

describe('scheduled sending', () => {
  const sentTo = (to: string) => sink.messages.filter((m) => m.to.includes(to));

  it('sends Monday after 08:00 in the project zone, once per slot, from the jobs run', async () => {
    const before = sentTo('ceo@reports.example').length;
    clock.set(Date.parse('2026-03-16T06:59:00Z')); // 07:59 Berlin
    let summary = await runScheduledJobs(h.deps, clock.now(), { emailRetryDelaysMs: FAST_RETRIES, onlyProjects: new Set([projectId]) });
    expect(summary.emailReports.filter((r) => r.projectId === projectId)).toEqual([]);

    clock.set(Date.parse('2026-03-16T07:01:00Z')); // 08:01 Berlin
    summary = await runScheduledJobs(h.deps, clock.now(), { emailRetryDelaysMs: FAST_RETRIES, onlyProjects: new Set([projectId]) });
    expect(summary.emailReports.filter((r) => r.projectId === projectId)).toEqual([{ projectId, slot: Date.parse('2026-03-16T07:00:00Z'), sent: 1, failed: 0 }]);
    const [mail] = (await sink.waitFor((m) => m.to.includes('ceo@reports.example'), before + 1)).slice(-1);
    expect(mail!.parsed.subject).toBe(`Weekly report for ${domain} (Mar 9 – Mar 15, 2026)`);
    // The unsubscribed address gets nothing.
    expect(sentTo('growth@reports.example')).toHaveLength(1);

    clock.set(Date.parse('2026-03-16T09:00:00Z'));
    summary = await runScheduledJobs(h.deps, clock.now(), { emailRetryDelaysMs: FAST_RETRIES, onlyProjects: new Set([projectId]) });
    expect(summary.emailReports.filter((r) => r.projectId === projectId)).toEqual([]);
    expect(sentTo('ceo@reports.example')).toHaveLength(before + 1);
    const state = (await (await h.call('GET', path(), { token: owner.writeKey })).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ nextRunAt: '2026-03-23T07:00:00.000Z', lastSentAt: '2026-03-16T07:01:00.000Z', lastResult: { sent: 1, failed: 0 } });
  });

  it('sends a slot once even when several runners race for it', async () => {
    const before = sentTo('ceo@reports.example').length;
    clock.set(Date.parse('2026-03-23T07:30:00Z'));
    const results = await Promise.all([1, 2, 3].map(() => runDueEmailReports(h.deps, clock.now(), { delaysMs: FAST_RETRIES, onlyProjects: new Set([projectId]) })));
    expect(results.flatMap((r) => r.runs).filter((r) => r.projectId === projectId)).toHaveLength(1);
    await sink.waitFor((m) => m.to.includes('ceo@reports.example'), before + 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(sentTo('ceo@reports.example')).toHaveLength(before + 1);
  });

  it('catches up a run missed while nothing ran, once, for the last week (across the DST change)', async () => {
    const before = sentTo('ceo@reports.example').length;
    // The slots of 30 March and 6 April passed while the jobs were down; it is now Wednesday 8 April.
    clock.set(Date.parse('2026-04-08T12:00:00Z'));
    const first = await runDueEmailReports(h.deps, clock.now(), { delaysMs: FAST_RETRIES, onlyProjects: new Set([projectId]) });
    // The latest slot: Monday 6 April 08:00 Berlin summer time (06:00Z).
    expect(first.runs.filter((r) => r.projectId === projectId)).toEqual([{ projectId, slot: Date.parse('2026-04-06T06:00:00Z'), sent: 1, failed: 0 }]);
    const second = await runDueEmailReports(h.deps, clock.now() + HOUR, { delaysMs: FAST_RETRIES, onlyProjects: new Set([projectId]) });
    expect(second.runs.filter((r) => r.projectId === projectId)).toEqual([]);
    const mails = await sink.waitFor((m) => m.to.includes('ceo@reports.example'), before + 1);
    expect(mails).toHaveLength(before + 1);
    expect(mails.at(-1)!.parsed.subject).toBe(`Weekly report for ${domain} (Mar 30 – Apr 5, 2026)`);
  });

  it('sends a monthly report on the 1st after 08:00 local, for the whole month before', async () => {
    clock.set(Date.parse('2026-04-20T12:00:00Z'));
    expect((await h.call('PUT', path(), { token: owner.writeKey, body: { frequency: 'monthly', recipients: ['ceo@reports.example'] } })).status).toBe(200);
    const before = sentTo('ceo@reports.example').length;
    clock.set(Date.parse('2026-05-01T05:59:00Z')); // 07:59 Berlin
    expect((await runDueEmailReports(h.deps, clock.now(), { delaysMs: FAST_RETRIES, onlyProjects: new Set([projectId]) })).runs.filter((r) => r.projectId === projectId)).toEqual([]);
    clock.set(Date.parse('2026-05-01T06:00:00Z'));
    expect((await runDueEmailReports(h.deps, clock.now(), { delaysMs: FAST_RETRIES, onlyProjects: new Set([projectId]) })).runs.filter((r) => r.projectId === projectId)).toHaveLength(1);
    const mail = (await sink.waitFor((m) => m.to.includes('ceo@reports.example'), before + 1)).at(-1)!;
    expect(mail.parsed.subject).toBe(`Monthly report for ${domain} (April 2026)`);
    expect(mail.parsed.text).toContain('compared with the month before');
  });
});

describe('without email on the server', () => {
  it('answers 409 to set-up and send, still reads and deletes', async () => {
    const deps = { ...h.deps, mailer: undefined };
    const app = createApp(deps);
    const call = (method: string, p: string, body?: unknown) =>
      Promise.resolve(app.request(p, { method, headers: { Authorization: `Bearer ${owner.writeKey}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }));
    const put = await call('PUT', path(), { frequency: 'weekly', recipients });
    expect(put.status).toBe(409);
    expect(await put.json()).toEqual({ error: 'Email is not configured on this server: set SMTP_URL (or EMAIL_API_URL on Workers)' });
    const send = await call('POST', path('/send'));
    expect(send.status).toBe(409);
    expect((await call('GET', path())).status).toBe(200);
    // The jobs send nothing without a mailer: the due report waits.
    expect((await runDueEmailReports(deps, Date.parse('2026-06-01T07:00:00Z'), { onlyProjects: new Set([projectId]) })).runs).toEqual([]);
    expect((await call('DELETE', path())).status).toBe(200);
    expect((await call('GET', path())).status).toBe(404);
    expect(await h.deps.redis.zscore(REPORTS_DUE_KEY, projectId)).toBeNull();
  });
});
