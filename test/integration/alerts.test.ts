import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { createApp } from '../../src/app.js';
import { runAlerts } from '../../src/jobs/scheduled-alerts.js';
import { runScheduledJobs } from '../../src/jobs/scheduled.js';
import type { Fetch } from '../../src/jobs/webhook.js';
import { alertLockKey, alertStore } from '../../src/notify/alert-store.js';
import { smtpMailer } from '../../src/notify/smtp-mailer.js';
import { closeHarness, createHarness, unique, type Harness, type TestUser } from '../helpers/harness.js';
import { addMember } from '../helpers/report-fixtures.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const FAST = [10, 10];

const clock = fixedClock(Date.parse('2026-03-18T12:00:00Z'));
let h: Harness;
let sink: SmtpSink;
let owner: TestUser;
let member: TestUser;
const projects: { domain: string; id: string }[] = [];

/* A webhook receiver on loopback. Alert URLs must be https, so the jobs get a fetch that sends https://127.0.0.1:port to http. */
interface Hook {
  body: string;
  signature: string | undefined;
}
const hooks: Hook[] = [];
let hookServer: Server;
let hookPort: number;
const toPlainHttp: Fetch = (url, init) => fetch(url.replace(/^https:/, 'http:'), init);

async function newSite(label: string) {
  const domain = h.domain(label);
  const res = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: label, domain, timeZone: 'UTC' } });
  expect(res.status).toBe(201);
  const site = { domain, id: ((await res.json()) as { id: string }).id };
  projects.push(site);
  return site;
}

/** Historical pageviews through the import route, one distinct visitor each. */
async function importVisitors(domain: string, count: number, from: number, to: number, label = unique('v')) {
  const lines = Array.from({ length: count }, (_, i) => ({
    timestamp: new Date(from + Math.floor(((to - from) * i) / Math.max(1, count))).toISOString(),
    kind: 'pageview',
    visitorId: `${label}-${i}`,
    sessionId: `${label}-s${i}`,
    url: `https://${domain}/`,
  }));
  const res = await h.call('POST', `/api/v1/projects/${domain}/import`, {
    token: owner.writeKey,
    body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
    headers: { 'Content-Type': 'application/x-ndjson' },
  });
  expect(await res.json()).toMatchObject({ imported: count, rejected: 0 });
}

/** Live pageviews through POST /api/event, each from a new address (a new visitor), stamped by the app clock. */
async function liveVisitors(site: { domain: string; id: string }, count: number) {
  for (let i = 0; i < count; i++) {
    const ip = `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + i}`;
    const res = await h.app.request('/api/event', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': CHROME, 'X-Forwarded-For': ip },
      body: JSON.stringify({ site: site.id, kind: 'pageview', url: `https://${site.domain}/live` }),
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-sightline-dropped')).toBeNull();
  }
}

async function createAlert(domain: string, body: Record<string, unknown>) {
  const res = await h.call('POST', `/api/v1/projects/${domain}/alerts`, { token: owner.writeKey, body: { email: ['oncall@alerts.example'], webhookUrl: `https://127.0.0.1:${hookPort}/hook`, ...body } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; webhookSecret: string };
}

const ours = () => new Set(projects.map((p) => p.id));

/**
 * Jobs of other test files (and processes) sharing Redis db 9 evaluate every alert now and then,
 * holding an alert's lock for a few milliseconds; a run that meets a held lock skips the alert,
 * so wait for our alerts' locks to be free first.
 */
async function locksFree() {
  for (const p of projects) {
    for (const a of await alertStore.list(h.deps.redis, p.id)) {
      for (let i = 0; i < 100 && (await h.deps.redis.exists(alertLockKey(a.id))); i++) await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** One jobs run at the clock's time, over this file's projects; the firings of `projectId`. */
async function evaluate(projectId: string) {
  await locksFree();
  const { fired, errors } = await runAlerts(h.deps, clock.now(), { fetch: toPlainHttp, delaysMs: FAST, onlyProjects: ours() });
  expect(errors.filter((e) => projects.some((p) => e.includes(p.domain)))).toEqual([]);
  return fired.filter((f) => f.projectId === projectId);
}

const hooksFor = (domain: string) => hooks.map((x) => ({ ...x, json: JSON.parse(x.body) })).filter((x) => x.json.domain === domain);
const mailsAbout = (domain: string) => sink.messages.filter((m) => m.parsed.subject?.includes(domain));

beforeAll(async () => {
  sink = await startSmtpSink();
  h = await createHarness({ clock, env: { TRUST_PROXY: '1', PUBLIC_URL: 'https://stats.example.test', WEBHOOK_ALLOW_PRIVATE: '1' }, mailer: smtpMailer(sink.url, 'alerts@stats.example.test') });
  [owner, member] = await Promise.all([h.user('al-owner'), h.user('al-member')]);
  hookServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hooks.push({ body: Buffer.concat(chunks).toString('utf8'), signature: req.headers['x-sightline-signature'] as string | undefined });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
  hookPort = (hookServer.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const p of projects) await alertStore.forgetProject(h.deps.redis, p.id);
  await new Promise<void>((r) => hookServer.close(() => r()));
  await sink.close();
  await closeHarness();
});

describe('alert routes', () => {
  it('validates the body, naming the field', async () => {
    const site = await newSite('alert-api');
    const bad = async (body: unknown) => {
      const res = await h.call('POST', `/api/v1/projects/${site.domain}/alerts`, { token: owner.writeKey, body });
      expect(res.status).toBe(400);
      return ((await res.json()) as { error: string }).error;
    };
    expect(await bad({ type: 'boom', webhookUrl: 'https://hooks.example/x' })).toBe('type must be one of: spike, drop, silent');
    expect(await bad({ type: 'spike', webhookUrl: 'https://hooks.example/x' })).toBe('visitors is required for spike alerts (a whole number from 1 to 10000000)');
    expect(await bad({ type: 'drop', percent: 100, webhookUrl: 'https://hooks.example/x' })).toBe('percent must be a whole number from 1 to 99');
    expect(await bad({ type: 'silent', hours: 73, webhookUrl: 'https://hooks.example/x' })).toBe('hours must be a whole number from 1 to 72');
    expect(await bad({ type: 'silent', hours: 2, percent: 10, webhookUrl: 'https://hooks.example/x' })).toBe('percent applies to drop alerts only');
    expect(await bad({ type: 'silent', hours: 2 })).toBe('email or webhookUrl is required');
    expect(await bad({ type: 'silent', hours: 2, webhookUrl: 'http://hooks.example/x' })).toBe('webhookUrl must be an https URL (at most 2000 characters) or null');
    expect(await bad({ type: 'silent', hours: 2, email: ['nope'] })).toBe('email: "nope" is not an email address');
    expect(await bad({ type: 'silent', hours: 2, email: Array.from({ length: 21 }, (_, i) => `a${i}@x.example`) })).toBe('email must be a list of up to 20 email addresses');
    expect(await bad({ type: 'spike', visitors: 10, cooldownHours: 169, webhookUrl: 'https://hooks.example/x' })).toBe('cooldownHours must be a whole number from 1 to 168');
  });

  it('creates, lists and deletes alerts; read keys 403, members 404, email without SMTP 409', async () => {
    const site = await newSite('alert-crud');
    const path = `/api/v1/projects/${site.domain}/alerts`;
    const body = { type: 'spike', visitors: 100, webhookUrl: 'https://hooks.example/x' };
    expect((await h.call('POST', path, { token: owner.readKey, body })).status).toBe(403);
    await addMember(h, site.id, member, 'member');
    const asMember = await h.call('POST', path, { token: member.writeKey, body });
    expect(asMember.status).toBe(404);
    expect(await asMember.json()).toEqual({ error: 'Project not found' });
    expect((await h.call('GET', path, { token: member.writeKey })).status).toBe(404);

    const created = await h.call('POST', path, { token: owner.writeKey, body });
    expect(created.status).toBe(201);
    const alert = (await created.json()) as Record<string, unknown>;
    expect(alert).toMatchObject({ type: 'spike', visitors: 100, percent: null, hours: null, email: [], webhookUrl: 'https://hooks.example/x', cooldownHours: 12, lastFiredAt: null });
    expect(alert.webhookSecret).toMatch(/^whsec_[0-9a-f]{48}$/);
    const list = (await (await h.call('GET', path, { token: owner.session })).json()) as { alerts: Record<string, unknown>[] };
    expect(list.alerts.map((a) => a.id)).toEqual([alert.id]);
    expect(JSON.stringify(list)).not.toContain(alert.webhookSecret as string);

    // Without email on the server: an alert with addresses is refused, a webhook-only one is fine.
    const noMail = createApp({ ...h.deps, mailer: undefined });
    const post = (b: unknown) => noMail.request(path, { method: 'POST', headers: { Authorization: `Bearer ${owner.writeKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(b) });
    const refused = await post({ type: 'silent', hours: 3, email: ['ops@x.example'] });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({ error: 'Email is not configured on this server: set SMTP_URL (or EMAIL_API_URL on Workers)' });
    expect((await post({ type: 'silent', hours: 3, webhookUrl: 'https://hooks.example/y' })).status).toBe(201);

    for (let i = 0; i < 18; i++) expect((await h.call('POST', path, { token: owner.writeKey, body })).status).toBe(201);
    const full = await h.call('POST', path, { token: owner.writeKey, body });
    expect(full.status).toBe(400);
    expect(await full.json()).toEqual({ error: 'A project can have at most 20 alerts' });

    expect((await h.call('DELETE', `${path}/${alert.id}`, { token: member.writeKey })).status).toBe(404);
    expect((await h.call('DELETE', `${path}/${alert.id}`, { token: owner.writeKey })).status).toBe(200);
    const again = await h.call('DELETE', `${path}/${alert.id}`, { token: owner.writeKey });
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual({ error: 'Alert not found' });
    for (const a of ((await (await h.call('GET', path, { token: owner.writeKey })).json()) as { alerts: { id: string }[] }).alerts) {
      await h.call('DELETE', `${path}/${a.id}`, { token: owner.writeKey });
    }
  });
});

describe('spike', () => {
  it('fires once at the threshold, stays quiet while it holds, and again only after clear, return and cooldown', async () => {
    const T = Date.parse('2026-03-18T12:00:00Z');
    clock.set(T);
    const site = await newSite('spike');
    // Old traffic does not count: the last 60 minutes only.
    await importVisitors(site.domain, 8, T - 3 * HOUR, T - 61 * MIN);
    const { id, webhookSecret } = await createAlert(site.domain, { type: 'spike', visitors: 5, cooldownHours: 2 });
    await liveVisitors(site, 4);
    expect(await evaluate(site.id)).toEqual([]);

    await liveVisitors(site, 1);
    clock.set(T + MIN);
    const [first, ...more] = await evaluate(site.id);
    expect(more).toEqual([]);
    expect(first).toMatchObject({ alertId: id, type: 'spike', facts: { type: 'spike', visitors: 5, threshold: 5 }, webhook: { status: 200 }, email: { sent: 1, failed: 0 } });

    // The webhook: signed like export notices, with the message in `text` (Slack) and `content` (Discord).
    const [hook] = hooksFor(site.domain);
    expect(hook!.signature).toBe(`sha256=${createHmac('sha256', webhookSecret).update(hook!.body).digest('hex')}`);
    const headline = `Traffic spike on ${site.domain}: 5 visitors in the last 60 minutes (alert at 5)`;
    expect(hook!.json).toMatchObject({ type: 'alert.spike', domain: site.domain, text: `${headline}\nhttps://stats.example.test/#/p/${site.domain}`, alert: { id, type: 'spike', visitors: 5 } });
    expect(hook!.json.content).toBe(hook!.json.text);
    const [mail] = await sink.waitFor((m) => m.parsed.subject === headline);
    expect(mail!.to).toEqual(['oncall@alerts.example']);
    expect(mail!.parsed.text).toContain(`Open the dashboard: https://stats.example.test/#/p/${site.domain}`);
    expect(mail!.parsed.html).toContain('<table role="presentation"');

    // Still above the threshold: no second message.
    await liveVisitors(site, 2);
    clock.set(T + 5 * MIN);
    expect(await evaluate(site.id)).toEqual([]);
    // An hour later the window is empty: cleared.
    clock.set(T + 66 * MIN);
    expect(await evaluate(site.id)).toEqual([]);
    // Returned, but within the 2-hour cooldown: quiet.
    await liveVisitors(site, 5);
    clock.set(T + 67 * MIN);
    expect(await evaluate(site.id)).toEqual([]);
    // Cooldown over, condition holds again (and was cleared in between): fires.
    await liveVisitors(site, 5);
    clock.set(T + 121 * MIN);
    expect((await evaluate(site.id)).map((f) => f.facts)).toEqual([{ type: 'spike', visitors: 10, threshold: 5 }]);
    expect(hooksFor(site.domain)).toHaveLength(2);
    expect(mailsAbout(site.domain)).toHaveLength(2);
    const listed = (await (await h.call('GET', `/api/v1/projects/${site.domain}/alerts`, { token: owner.writeKey })).json()) as { alerts: { lastFiredAt: string }[] };
    expect(listed.alerts[0]!.lastFiredAt).toBe(new Date(T + 121 * MIN).toISOString());
  });
});

describe('drop', () => {
  it('needs 20 visitors a week earlier, fires once when the last 24 h fall to the percentage, and respects cooldown and clear-then-return', async () => {
    const T = Date.parse('2026-03-25T12:00:00Z');
    clock.set(T);
    const site = await newSite('drop');
    // The same 24 hours a week earlier, with margins so the window still holds them an hour later.
    const weekBefore = { from: T - 8 * DAY + 3 * HOUR, to: T - 7 * DAY - 3 * HOUR };
    await importVisitors(site.domain, 19, weekBefore.from, weekBefore.to);
    await importVisitors(site.domain, 5, T - 20 * HOUR, T - 4 * HOUR);
    await createAlert(site.domain, { type: 'drop', percent: 50, cooldownHours: 1, email: [] });
    // 5 ≤ 50% of 19, but 19 visitors are too few to compare with.
    expect(await evaluate(site.id)).toEqual([]);

    await importVisitors(site.domain, 11, weekBefore.from, weekBefore.to);
    clock.set(T + MIN);
    const fired = await evaluate(site.id);
    expect(fired.map((f) => f.facts)).toEqual([{ type: 'drop', visitors: 5, weekBefore: 30, percent: 50 }]);
    expect(fired[0]!.email).toBeUndefined();
    expect(hooksFor(site.domain)[0]!.json.text).toBe(
      `Traffic drop on ${site.domain}: 5 visitors in the last 24 hours, 17% of the 30 a week earlier (alert at 50% or less)\nhttps://stats.example.test/#/p/${site.domain}`,
    );
    clock.set(T + 2 * MIN);
    expect(await evaluate(site.id)).toEqual([]);

    // Live traffic lifts the day above 50% of 30: cleared.
    await liveVisitors(site, 11);
    clock.set(T + 3 * MIN);
    expect(await evaluate(site.id)).toEqual([]);
    // More traffic a week earlier makes 16 ≤ 50% of 40 again: returned, within the hour of cooldown.
    await importVisitors(site.domain, 10, weekBefore.from, weekBefore.to);
    clock.set(T + 4 * MIN);
    expect(await evaluate(site.id)).toEqual([]);
    clock.set(T + 62 * MIN);
    expect((await evaluate(site.id)).map((f) => f.facts)).toEqual([{ type: 'drop', visitors: 16, weekBefore: 40, percent: 50 }]);
    expect(hooksFor(site.domain)).toHaveLength(2);
  });
});

describe('silent', () => {
  it('fires once when the tracker stops after having sent, never for a project without events, and again only after clear, return and cooldown', async () => {
    const T = Date.parse('2026-04-01T12:00:00Z');
    clock.set(T);
    const quiet = await newSite('never');
    await createAlert(quiet.domain, { type: 'silent', hours: 2 });
    const site = await newSite('silent');
    await importVisitors(site.domain, 6, T - 10 * HOUR, T - 3 * HOUR);
    const { id } = await createAlert(site.domain, { type: 'silent', hours: 2, cooldownHours: 3 });

    const fired = await evaluate(site.id);
    expect(fired.map((f) => [f.alertId, f.facts])).toEqual([[id, { type: 'silent', hours: 2, lastEventAt: T - 10 * HOUR + Math.floor((7 * HOUR * 5) / 6) }]]);
    expect(await evaluate(quiet.id)).toEqual([]);
    const headline = `No events from ${site.domain} for 2 hours: the tracker may have stopped sending`;
    expect(hooksFor(site.domain)[0]!.json.text).toBe(`${headline}\nLast event: 2026-04-01 07:50 UTC.\nhttps://stats.example.test/#/p/${site.domain}`);
    await sink.waitFor((m) => m.parsed.subject === headline);

    clock.set(T + MIN);
    expect(await evaluate(site.id)).toEqual([]);
    // The tracker sends again: cleared.
    clock.set(T + 5 * MIN);
    await liveVisitors(site, 1);
    clock.set(T + 6 * MIN);
    expect(await evaluate(site.id)).toEqual([]);
    // Quiet for two hours again: returned, but within the 3-hour cooldown.
    clock.set(T + 2 * HOUR + 6 * MIN);
    expect(await evaluate(site.id)).toEqual([]);
    clock.set(T + 3 * HOUR + MIN);
    // The same job code as the cron and the Node timer.
    await locksFree();
    const summary = await runScheduledJobs(h.deps, clock.now(), { fetch: toPlainHttp, emailRetryDelaysMs: FAST, onlyProjects: ours() });
    expect(summary.alerts.filter((f) => f.projectId === site.id).map((f) => f.facts.type)).toEqual(['silent']);
    expect(summary.alerts.filter((f) => f.projectId === quiet.id)).toEqual([]);
    expect(hooksFor(site.domain)).toHaveLength(2);
    expect(hooksFor(quiet.domain)).toHaveLength(0);
    expect(mailsAbout(site.domain)).toHaveLength(2);
  });

  it('fires once when several runners evaluate at the same moment', async () => {
    const T = Date.parse('2026-04-10T12:00:00Z');
    clock.set(T);
    const site = await newSite('race');
    await importVisitors(site.domain, 3, T - 6 * HOUR, T - 4 * HOUR);
    await createAlert(site.domain, { type: 'silent', hours: 1, email: [] });
    await locksFree();
    const results = await Promise.all([1, 2, 3, 4].map(() => runAlerts(h.deps, clock.now(), { fetch: toPlainHttp, delaysMs: FAST, onlyProjects: new Set([site.id]) })));
    expect(results.flatMap((r) => r.fired).filter((f) => f.projectId === site.id)).toHaveLength(1);
    expect(hooksFor(site.domain)).toHaveLength(1);
  });
});
