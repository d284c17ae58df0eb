/// <reference types="@cloudflare/vitest-pool-workers/types" />
import { createExecutionContext, createScheduledController } from 'cloudflare:test';
import { createClient } from '@clickhouse/client-web';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../../src/entry/worker.js';
import { bridgeRedis, call, makeUser, testEnv, unique, type WorkerUser } from './helpers.js';

/* The Worker sends email through the JSON email API of EMAIL_API_URL; here that is a mock in the Node half (node-side.ts). */
interface Sent {
  authorization: string;
  body: { from: string; to: string[]; subject: string; text: string; html: string; headers: Record<string, string> };
}
const sentTo = async (to: string) => ((await (await fetch(testEnv.EMAIL_API_URL)).json()) as Sent[]).filter((s) => s.body.to.includes(to));

/** Pageview rows in `events` (the columns the reports read; the rest take their defaults). */
async function insertPageviews(rows: { at: number; visitor: number; session: number; path: string }[]) {
  const web = createClient({ url: testEnv.CLICKHOUSE_URL });
  await web.insert({
    table: 'events',
    format: 'JSONEachRow',
    values: rows.map((r) => ({
      project_id: projectId,
      ts: new Date(r.at).toISOString().replace('T', ' ').replace('Z', ''),
      kind: 'pageview',
      visitor_id: String(1000 + r.visitor),
      session_id: String(5000 + r.session),
      hostname: domain,
      path: r.path,
      referrer_source: '(direct)',
    })),
  });
  await web.close();
}

let user: WorkerUser;
let domain: string;
let projectId: string;
const path = (rest: string) => `/api/v1/projects/${domain}${rest}`;

beforeAll(async () => {
  user = await makeUser('notify');
  domain = `${unique('mail')}.example.com`;
  const res = await call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Mail', domain, timeZone: 'Europe/Berlin' } });
  expect(res.status).toBe(201);
  projectId = ((await res.json()) as { id: string }).id;
  // Visits last week, whatever "now" is, written straight into ClickHouse through the bridge (as the queue consumer would).
  // The week is the project's: late on a Sunday (UTC), Berlin is in the next week already.
  const monday = new Date(`${new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date())}T00:00:00Z`);
  monday.setUTCDate(monday.getUTCDate() - ((monday.getUTCDay() + 6) % 7) - 7);
  monday.setUTCHours(12, 0, 0, 0);
  await insertPageviews([0, 1, 2, 3].map((i) => ({ at: monday.getTime() + i * 3_600_000, visitor: i % 3, session: i, path: `/p${i % 2}` })));
});

describe('notifications on Workers (email API mocked at the HTTP boundary)', () => {
  const to = () => `${projectId.toLowerCase()}@inbox.example`;

  it('sends the email report through the email API, with both parts and a working one-click unsubscribe', async () => {
    const put = await call('PUT', path('/email-reports'), { token: user.writeKey, body: { frequency: 'weekly', recipients: [to()] } });
    expect(put.status, await put.clone().text()).toBe(201);
    const send = await call('POST', path('/email-reports/send'), { token: user.writeKey });
    expect(send.status, await send.clone().text()).toBe(200);
    expect(await send.json()).toMatchObject({ sent: [to()], failed: [] });

    const [mail] = await sentTo(to());
    expect(mail!.authorization).toBe('Bearer re_workers_test');
    expect(mail!.body.from).toBe('Sightline <reports@workers.example>');
    expect(mail!.body.subject).toMatch(new RegExp(`^Weekly report for ${domain.replace(/\./g, '\\.')} \\(`));
    expect(mail!.body.text).toMatch(/^Visitors {8}3 {9}/m);
    expect(mail!.body.text).toMatch(/^Pageviews {7}4 {9}/m);
    expect(mail!.body.html).toContain('<table role="presentation"');
    expect(mail!.body.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    const link = /^<(.+)>$/.exec(mail!.body.headers['List-Unsubscribe']!)![1]!;
    expect(link.startsWith('https://sightline.test/email-reports/unsubscribe?token=')).toBe(true);

    const post = await call('POST', new URL(link).pathname + new URL(link).search, { body: 'List-Unsubscribe=One-Click', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(post.status).toBe(200);
    expect(((await (await call('GET', path('/email-reports'), { token: user.writeKey })).json()) as { recipients: string[] }).recipients).toEqual([]);
  });

  it('the scheduled handler sends a due report once, and fires a silent alert by email', async () => {
    const put = await call('PUT', path('/email-reports'), { token: user.writeKey, body: { frequency: 'weekly', recipients: [to()] } });
    const { nextRunAt } = (await put.json()) as { nextRunAt: string };
    const alert = await call('POST', path('/alerts'), { token: user.writeKey, body: { type: 'silent', hours: 1, email: [`alerts-${to()}`] } });
    expect(alert.status).toBe(201);
    const before = (await sentTo(to())).length;
    const at = Date.parse(nextRunAt) + 60_000;
    // The last event two hours before the run: silent for the alert's hour, after a day with events.
    await insertPageviews([{ at: at - 2 * 3_600_000, visitor: 9, session: 9, path: '/late' }]);
    await worker.scheduled(createScheduledController({ scheduledTime: at, cron: '*/15 * * * *' }), testEnv as never, createExecutionContext() as never);
    expect(await sentTo(to())).toHaveLength(before + 1);
    await worker.scheduled(createScheduledController({ scheduledTime: at + 60_000, cron: '*/15 * * * *' }), testEnv as never, createExecutionContext() as never);
    expect(await sentTo(to())).toHaveLength(before + 1);
    // The alert fired on the first run only: the silence went on, but it had not cleared.
    const alerts = await sentTo(`alerts-${to()}`);
    expect(alerts.map((a) => a.body.subject)).toEqual([`No events from ${domain} for 1 hour: the tracker may have stopped sending`]);
    await call('DELETE', path('/email-reports'), { token: user.writeKey });
    await bridgeRedis().srem('alerts:projects', projectId);
  });
});
