/**
 * The Notifications page of a project in headless Chromium (playwright-core, /usr/bin/chromium)
 * against the real app over HTTP, with a real SMTP server receiving what "Send now" sends:
 * set up the email report, send it, add and remove alerts; axe-core finds no serious or
 * critical violations; a member is told the page is for owners and admins.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS_DUE_KEY } from '../../src/notify/email-report-store.js';
import { alertStore } from '../../src/notify/alert-store.js';
import { smtpMailer } from '../../src/notify/smtp-mailer.js';
import { closeHarness, createHarness, listen, type Harness, type TestUser } from '../helpers/harness.js';
import { addMember, newProject } from '../helpers/report-fixtures.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ARTIFACTS = 'test-artifacts';

let h: Harness;
let sink: SmtpSink;
let app: { url: string; close(): Promise<void> };
let browser: Browser;
let page: Page;
let owner: TestUser;
let member: TestUser;
let site: { domain: string; id: string };

async function axeViolations(p: Page): Promise<string[]> {
  await p.evaluate(AXE_SOURCE);
  return p.evaluate(async () => {
    const result = await (window as any).axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')).join(' | ')}`);
  });
}

/** Opens the app signed in as `user` (the session token the sign-in page would store). */
async function openAs(user: TestUser, hash: string): Promise<void> {
  await page.goto(`${app.url}/#/signin`);
  await page.evaluate((token) => sessionStorage.setItem('sightline.session', token), user.session);
  await page.goto(`${app.url}/${hash}`);
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  sink = await startSmtpSink();
  // hooks.example resolves nowhere here: the SSRF check's DNS step is lifted, as for local testing.
  h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1' }, mailer: smtpMailer(sink.url, 'reports@stats.example') });
  app = await listen(h.app);
  [owner, member] = await Promise.all([h.user('np-owner'), h.user('np-member')]);
  site = await newProject(h, owner, 'Europe/Berlin');
  await addMember(h, site.id, member, 'member');
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on('pageerror', (err) => {
    throw err;
  });
}, 60_000);

afterAll(async () => {
  if (site) {
    await h.deps.redis.zrem(REPORTS_DUE_KEY, site.id);
    await alertStore.forgetProject(h.deps.redis, site.id);
  }
  await browser?.close();
  await app?.close();
  await sink?.close();
  await closeHarness();
});

describe('Notifications page', () => {
  it('sets up the email report and sends it now to a real SMTP server', async () => {
    await openAs(owner, `#/p/${site.domain}/notifications`);
    await page.getByRole('heading', { name: 'Email report' }).waitFor();
    await page.getByText('No email report.').waitFor();
    await page.getByLabel('Frequency').selectOption('weekly');
    await page.getByLabel('Recipients (up to 20)').fill('boss@reports.example, not-an-address');
    await page.getByRole('button', { name: 'Save email report' }).click();
    await page.getByText('recipients: "not-an-address" is not an email address').waitFor();
    await page.getByLabel('Recipients (up to 20)').fill('boss@reports.example,\nteam@reports.example');
    await page.getByRole('button', { name: 'Save email report' }).click();
    await page.getByText('Email report saved.').waitFor();
    await page.getByText(/Active: weekly to boss@reports\.example, team@reports\.example/).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Send now' }).click();
    await page.getByText('Sent to 2 recipients.').waitFor({ timeout: 20_000 });
    const mails = await sink.waitFor((m) => m.to.includes('boss@reports.example') || m.to.includes('team@reports.example'), 2);
    expect(mails.map((m) => m.parsed.subject)).toEqual([expect.stringMatching(new RegExp(`^Weekly report for ${site.domain.replace(/\./g, '\\.')} `)), expect.anything()]);
  }, 60_000);

  it('adds alerts (showing the webhook secret once), lists and deletes them', async () => {
    await page.getByLabel('Type').selectOption('silent');
    await expect.poll(() => page.getByLabel('Hours without events').inputValue()).toBe('6');
    await page.getByLabel('Hours without events').fill('3');
    await page.getByLabel('Email (optional)').fill('oncall@reports.example');
    await page.getByLabel('Webhook URL (optional)').fill('https://hooks.example/sightline');
    await page.getByRole('button', { name: 'Add alert' }).click();
    await page.getByText('Alert added.').waitFor();
    const secret = (await page.locator('code.secret').textContent())!;
    expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    await page.getByText('Silent: no events for 3 hours').waitFor();

    await page.getByLabel('Type').selectOption('spike');
    await page.getByLabel('Visitors in 60 minutes').fill('250');
    await page.getByLabel('Email (optional)').fill('');
    await page.getByLabel('Webhook URL (optional)').fill('');
    await page.getByRole('button', { name: 'Add alert' }).click();
    await page.getByText('email or webhookUrl is required').waitFor();
    await page.getByLabel('Webhook URL (optional)').fill('https://hooks.example/spikes');
    await page.getByRole('button', { name: 'Add alert' }).click();
    await page.getByText('Spike: 250 or more visitors in 60 minutes').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: `${ARTIFACTS}/notifications-desktop.png`, fullPage: true });

    const api = (await (await h.call('GET', `/api/v1/projects/${site.domain}/alerts`, { token: owner.writeKey })).json()) as { alerts: { type: string; hours: number | null; email: string[] }[] };
    expect(api.alerts.map((a) => [a.type, a.hours, a.email])).toEqual([['silent', 3, ['oncall@reports.example']], ['spike', null, []]]);

    await page.getByRole('button', { name: 'Delete alert Silent: no events for 3 hours' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Alert deleted.').waitFor();
    await expect.poll(async () => (await page.locator('.rows li').allTextContents()).length).toBe(1);
    // Reloaded: the secret is gone from the page.
    await page.reload();
    await page.getByText('Spike: 250 or more visitors in 60 minutes').waitFor();
    expect(await page.content()).not.toContain(secret);
  }, 60_000);

  it('stops the email report', async () => {
    await page.getByRole('button', { name: 'Stop email report' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Stop' }).click();
    await page.getByText('Email report stopped.').waitFor();
    expect((await h.call('GET', `/api/v1/projects/${site.domain}/email-reports`, { token: owner.writeKey })).status).toBe(404);
  }, 30_000);

  it('tells a member that notifications are for owners and admins', async () => {
    await openAs(member, `#/p/${site.domain}/notifications`);
    await page.getByText('Only owners and admins of this project manage its notifications.').waitFor();
    expect(await page.getByRole('heading', { name: 'Email report' }).count()).toBe(0);
  }, 30_000);
});
