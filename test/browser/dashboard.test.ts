/**
 * The dashboard end to end in headless Chromium (playwright-core driving /usr/bin/chromium),
 * against the real app (real Redis, embedded ClickHouse) served over HTTP. A second loopback
 * server plays the customer's site: Chromium resolves the project's domain to 127.0.0.1, so the
 * real tracker (/script.js) posts real events to the real /api/event for that domain.
 * Every page is checked with axe-core (no serious or critical violations); screenshots of the
 * dashboard and the public page at desktop (1280×800) and phone (390×844) widths go to
 * test-artifacts/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeHarness, createHarness, listen, type Harness, type TestUser } from '../helpers/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = 'test-artifacts';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** A real browser's UA: HeadlessChrome is (rightly) dropped as a bot by the ingest endpoint. */
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let h: Harness;
let app: { url: string; close(): Promise<void> };
let site: Server;
let sitePort: number;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let user: TestUser;
let domain: string;
let projectId = '';

/** Serious and critical axe-core (WCAG 2.1 A/AA) violations of the page, as readable lines. */
async function axeViolations(p: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, so the page's CSP (no inline scripts) still applies to the app.
  await p.evaluate(AXE_SOURCE);
  return p.evaluate(async () => {
    const result = await (window as any).axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')).join(' | ')}`);
  });
}

/** Fails with the serious and critical violations axe-core finds on the page. */
async function expectAccessible(p: Page, label: string): Promise<void> {
  expect(await axeViolations(p), `axe on ${label}`).toEqual([]);
}

async function shoot(p: Page, name: string): Promise<void> {
  for (const [label, size] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await p.setViewportSize(size);
    await p.waitForTimeout(150);
    await p.screenshot({ path: `${ARTIFACTS}/${name}-${label}.png`, fullPage: true });
    // No horizontal scrolling of the page itself at either width.
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} overflows horizontally at ${label} width`).toBeLessThanOrEqual(1);
  }
  await p.setViewportSize(DESKTOP);
}

const card = (p: Page, title: string) => p.getByRole('region', { name: title, exact: true });

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  h = await createHarness();
  app = await listen(h.app);
  user = await h.user('dash');
  domain = h.domain('shop');
  site = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop ${path}</title>` +
        `<script defer src="${app.url}/script.js" data-site="${projectId}"></script></head><body><h1>Shop page ${path}</h1></body></html>`,
    );
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  sitePort = (site.address() as AddressInfo).port;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', `--host-resolver-rules=MAP ${domain} 127.0.0.1`, '--disable-features=HttpsUpgrades'],
  });
  context = await browser.newContext({ viewport: DESKTOP, userAgent: USER_AGENT });
  page = await context.newPage();
  page.on('pageerror', (err) => {
    throw err;
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
  await app?.close();
  await closeHarness();
});

describe('dashboard in a real browser', () => {
  it('the accessibility check finds real violations (it is not vacuous)', async () => {
    const probe = await context.newPage();
    await probe.setContent('<html lang="en"><body><main><input type="text"><p style="color:#c8c8c8;background:#fff">faint text</p></main></body></html>');
    const found = (await axeViolations(probe)).join('\n');
    expect(found).toContain('label (critical)');
    expect(found).toContain('color-contrast (serious)');
    await probe.close();
  });

  it('signs in, and shows a new API key exactly once', async () => {
    await page.goto(`${app.url}/`);
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in to Sightline' }).isVisible()).toBe(true);
    await expectAccessible(page, 'sign-in');
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Invalid email or password').waitFor();
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.getByText('No projects yet').waitFor();
    await expectAccessible(page, 'projects (empty)');

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Key name').fill('Reporting server');
    await page.getByLabel('Scope').selectOption('write');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.locator('.key-reveal code');
    await secret.waitFor();
    const key = (await secret.textContent())!;
    expect(key).toMatch(/^sl_[0-9A-Za-z]{20,}$/);
    await page.getByRole('button', { name: 'Copy', exact: true }).waitFor();
    const row = page.getByRole('row', { name: /Reporting server/ });
    await expect.poll(() => row.textContent()).toContain(`…${key.slice(-4)}`);
    expect(await row.textContent()).toContain('Read & write');
    expect(await row.textContent()).not.toContain(key);
    await expectAccessible(page, 'account');
    // Shown once: after a reload the list has the prefix and last four only.
    await page.reload();
    await page.getByRole('row', { name: /Reporting server/ }).waitFor();
    expect(await page.content()).not.toContain(key);
    // The key works against the API.
    expect((await h.call('GET', '/api/v1/projects', { token: key })).status).toBe(200);
  }, 60_000);

  it('creates a project and shows its install snippet', async () => {
    await page.goto(`${app.url}/#/`);
    await page.getByRole('link', { name: 'Add a project' }).click();
    await page.getByLabel('Domain').fill(`https://www.${domain}/`);
    await page.getByLabel('Name', { exact: true }).fill('Shop');
    await page.getByLabel('Time zone').selectOption('Europe/Berlin');
    await expectAccessible(page, 'new project');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'Install the tracker' }).waitFor();
    const snippet = (await page.locator('.snippet').textContent())!;
    expect(snippet).toMatch(new RegExp(`^<script defer src="${app.url}/script.js" data-site="(prj_[\\w-]+)"></script>$`));
    projectId = /data-site="([^"]+)"/.exec(snippet)![1];
    await page.getByRole('button', { name: 'Verify install' }).click();
    await page.getByText('No events received yet').waitFor();
    await expectAccessible(page, 'install');
  }, 60_000);

  it('records tracker events from the site and shows them on the dashboard', async () => {
    const shop = await context.newPage();
    await shop.goto(`http://${domain}:${sitePort}/pricing`);
    await shop.waitForFunction(() => typeof (window as any).sightline?.track === 'function');
    await shop.evaluate(() => {
      (window as any).sightline.track('Signup');
      (window as any).sightline.transaction('Order', 4990, 'EUR');
    });
    // Earlier history with geography, through the import route (the browser here has no geo).
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const lines = [
      { timestamp: at(90), kind: 'pageview', visitorId: 'berlin-1', sessionId: 's1', url: `https://${domain}/`, countryCode: 'DE', city: 'Berlin', browser: 'Firefox', os: 'Linux', device: 'Desktop', referrer: 'https://news.example.org/post' },
      { timestamp: at(89), kind: 'pageview', visitorId: 'berlin-1', sessionId: 's1', url: `https://${domain}/pricing`, countryCode: 'DE', city: 'Berlin', browser: 'Firefox', os: 'Linux', device: 'Desktop' },
      { timestamp: at(88), kind: 'custom', name: 'Signup', visitorId: 'berlin-1', sessionId: 's1', url: `https://${domain}/pricing`, countryCode: 'DE', city: 'Berlin' },
      { timestamp: at(60), kind: 'pageview', visitorId: 'paris-1', sessionId: 's2', url: `https://${domain}/`, countryCode: 'FR', city: 'Paris', browser: 'Safari', os: 'iOS', device: 'Mobile' },
    ];
    const imported = await h.call('POST', `/api/v1/projects/${domain}/import`, { token: user.writeKey, body: lines.map((l) => JSON.stringify(l)).join('\n'), headers: { 'Content-Type': 'application/x-ndjson' } });
    expect(await imported.json()).toMatchObject({ imported: 4, rejected: 0 });
    await shop.close();

    await page.goto(`${app.url}/#/p/${domain}/install`);
    await page.getByRole('button', { name: 'Verify install' }).click();
    await page.getByText(/Installed: (first event received|events are arriving)/).waitFor();

    await page.getByRole('link', { name: 'Dashboard' }).click();
    const overview = card(page, 'Overview');
    await expect.poll(() => overview.textContent(), { timeout: 15_000 }).toMatch(/Visitors3/);
    expect(await overview.textContent()).toMatch(/Pageviews4/);
    await expect.poll(() => card(page, 'Top pages').textContent()).toContain('/pricing');
    expect(await card(page, 'Top pages').textContent()).toMatch(/\/pricing\s*22/);
    await expect.poll(() => card(page, 'Locations').textContent()).toContain('Germany');
    expect(await card(page, 'Locations').textContent()).toContain('🇩🇪');
    await card(page, 'Locations').getByRole('tab', { name: 'Cities' }).click();
    await expect.poll(() => card(page, 'Locations').textContent()).toContain('Berlin, Germany');
    await expect.poll(() => card(page, 'Top sources').textContent()).toContain('news.example.org');
    await expect.poll(() => card(page, 'Events').textContent()).toContain('Signup');
    await card(page, 'Devices').getByRole('tab', { name: 'Browsers' }).click();
    await expect.poll(() => card(page, 'Devices').textContent()).toContain('Firefox');
    await expect.poll(() => page.locator('.realtime').textContent()).toMatch(/^[1-9]\d* current visitors?$/);
    await expect.poll(() => card(page, 'Visitors and pageviews').locator('canvas').count()).toBeGreaterThan(0);
    await expect.poll(() => card(page, 'Core Web Vitals').textContent()).toMatch(/No Core Web Vitals|LCP/);
    await expect.poll(() => card(page, 'Bot traffic').textContent()).toContain('No bot traffic');

    // The visitor drawer: the Paris visitor's profile.
    await card(page, 'Recent visitors').getByRole('button', { name: /France/ }).click();
    const drawer = page.getByRole('dialog', { name: 'Visitor profile' });
    await expect.poll(() => drawer.textContent()).toContain('Paris, France');
    expect(await drawer.textContent()).toContain('Viewed /');
    await expectAccessible(page, 'visitor drawer');
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });

    // Period picker: the 24-hour view still has the events; CSV downloads with the session.
    await page.getByLabel('Period').selectOption('24h');
    await expect.poll(() => card(page, 'Overview').textContent()).toMatch(/Pageviews4/);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    expect((await download).suggestedFilename()).toBe(`sightline-${domain}-24h.csv`);
    await expectAccessible(page, 'dashboard');
    await shoot(page, 'dashboard');
  }, 90_000);

  it('sets up a goal and a funnel and shows them on the dashboard', async () => {
    await page.goto(`${app.url}/#/p/${domain}/goals`);
    await page.getByLabel('Goal name').fill('Signups');
    await page.getByLabel('Type', { exact: true }).selectOption('event');
    await page.getByLabel('Value', { exact: true }).fill('Signup');
    await page.getByLabel('Target (optional)').fill('4');
    await page.getByRole('button', { name: 'Add goal' }).click();
    await page.getByText('Goal Signups added.').waitFor();
    await page.getByLabel('Funnel name').fill('Pricing to signup');
    await page.getByLabel('Step 1 value').fill('/pricing');
    await page.getByLabel('Step 2 type').selectOption('event');
    await page.getByLabel('Step 2 value').fill('Signup');
    await page.getByRole('button', { name: 'Add funnel' }).click();
    await page.getByText('Funnel Pricing to signup added.').waitFor();
    await page.getByText('/pricing → Signup').waitFor();
    await expectAccessible(page, 'goals and funnels');

    await page.getByRole('link', { name: 'Dashboard' }).click();
    const goals = card(page, 'Goals');
    await expect.poll(() => goals.textContent()).toMatch(/Signups\s*2 of 4/);
    expect(await goals.getByRole('progressbar').getAttribute('value')).toBe('50');
    const funnels = card(page, 'Funnels');
    await expect.poll(() => funnels.textContent()).toContain('Pricing to signup');
    expect(await funnels.textContent()).toMatch(/Page \/pricing\s*2 visitors/);
    expect(await funnels.textContent()).toMatch(/Event Signup\s*2 visitors/);
  }, 60_000);

  it('lets the owner add and remove a member by email', async () => {
    const friend = await h.user('friend');
    await page.goto(`${app.url}/#/p/${domain}/members`);
    await page.getByLabel('Email of an existing account').fill(friend.email);
    await page.getByLabel('Role').selectOption('admin');
    await page.getByRole('button', { name: 'Add member' }).click();
    const row = page.getByRole('listitem').filter({ hasText: friend.email });
    await expect.poll(() => row.textContent()).toContain('admin');
    expect((await h.call('GET', `/api/v1/projects/${domain}`, { token: friend.session })).status).toBe(200);
    await expectAccessible(page, 'members');
    await row.getByRole('button', { name: `Remove ${friend.email}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await h.call('GET', `/api/v1/projects/${domain}`, { token: friend.session })).status).toBe(404);
  }, 60_000);

  it('schedules an export', async () => {
    await page.goto(`${app.url}/#/p/${domain}/exports`);
    await page.getByText('No scheduled export.').waitFor();
    await page.getByLabel('Frequency').selectOption('weekly');
    await page.getByLabel('Period', { exact: true }).selectOption('30d');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByText(/^Active: weekly, 30d, next run/).waitFor();
    await page.getByText('No exported files yet.').waitFor();
    await expectAccessible(page, 'exports');
    const schedule = await h.call('GET', `/api/v1/projects/${domain}/export/schedule`, { token: user.writeKey });
    expect(await schedule.json()).toMatchObject({ frequency: 'weekly', period: '30d' });
  }, 60_000);

  it('serves the public page only when enabled, read-only and in the brand color', async () => {
    const visitor = await browser.newContext({ viewport: DESKTOP });
    const anon = await visitor.newPage();
    const closed = await anon.goto(`${app.url}/share/${domain}`);
    expect(closed!.status()).toBe(404);
    await anon.getByRole('heading', { name: 'Page not found' }).waitFor();

    await page.goto(`${app.url}/#/p/${domain}/settings`);
    await page.getByLabel(/Public stats page/).check();
    await page.getByLabel(/Use a brand color/).check();
    await page.getByLabel('Brand color', { exact: true }).fill('#0f766e');
    await expectAccessible(page, 'settings');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const link = page.getByRole('link', { name: `${app.url}/share/${domain}` });
    expect(await link.getAttribute('href')).toBe(`${app.url}/share/${domain}`);

    // Excluded addresses: saved in canonical form, shown back, refused with the API's message.
    const addresses = page.getByLabel('Addresses');
    await addresses.fill('203.0.113.7\n2001:DB8:0::1');
    await page.getByRole('button', { name: 'Save addresses' }).click();
    await page.getByText('Excluded addresses saved.').waitFor();
    expect(await addresses.inputValue()).toBe('2001:db8::1\n203.0.113.7');
    expect(await (await h.call('GET', `/api/v1/projects/${domain}/excluded-ips`, { token: user.session })).json()).toEqual({ ips: ['2001:db8::1', '203.0.113.7'] });
    await addresses.fill('not-an-ip');
    await page.getByRole('button', { name: 'Save addresses' }).click();
    await page.getByText('ips must hold IPv4 or IPv6 addresses').waitFor();
    await addresses.fill('');
    await page.getByRole('button', { name: 'Save addresses' }).click();
    await page.getByText('No address is excluded.').waitFor();

    const open = await anon.goto(`${app.url}/share/${domain}`);
    expect(open!.status()).toBe(200);
    await anon.getByText(`Public stats of ${domain}`).waitFor();
    await expect.poll(() => card(anon, 'Top pages').textContent(), { timeout: 15_000 }).toContain('/pricing');
    await expect.poll(() => card(anon, 'Overview').textContent()).toMatch(/Visitors3/);
    await expect.poll(() => card(anon, 'Goals').textContent()).toContain('Signups');
    expect(await anon.evaluate(() => getComputedStyle(document.body).getPropertyValue('--accent').trim())).toBe('#0f766e');
    // Read-only and aggregate: no visitor list, funnels, CSV or sign-out.
    expect(await anon.getByRole('region', { name: 'Recent visitors' }).count()).toBe(0);
    expect(await anon.getByRole('button', { name: 'Download CSV' }).count()).toBe(0);
    expect(await anon.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    await expectAccessible(anon, 'share page');
    await shoot(anon, 'share');
    await visitor.close();
  }, 60_000);

  it('sends an expired session back to sign-in with a message', async () => {
    const token = await page.evaluate(() => sessionStorage.getItem('sightline.session'));
    expect((await h.call('POST', '/api/auth/logout', { token: token! })).status).toBe(200);
    await page.goto(`${app.url}/#/account`);
    await page.getByText('Your session has expired. Please sign in again.').waitFor();
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await expect.poll(() => page.locator('.project-card').textContent()).toMatch(/pageviews in 7 days/);
    expect(await page.locator('.project-card svg[role="img"]').count()).toBe(1);
    await expectAccessible(page, 'projects');
  }, 60_000);

  it('deletes the project after the domain is typed', async () => {
    await page.goto(`${app.url}/#/p/${domain}/settings`);
    await page.getByRole('button', { name: 'Delete project…' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${domain}?` });
    const confirm = dialog.getByRole('button', { name: 'Delete project' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(`Type ${domain} to confirm`).fill('wrong.example.com');
    expect(await confirm.isDisabled()).toBe(true);
    await expectAccessible(page, 'delete dialog');
    await dialog.getByLabel(`Type ${domain} to confirm`).fill(domain);
    await confirm.click();
    await page.getByText('No projects yet').waitFor();
    expect((await h.call('GET', `/api/v1/projects/${domain}`, { token: user.session })).status).toBe(404);
  }, 60_000);

  it('deletes the account only with its password, after the email is typed', async () => {
    await page.goto(`${app.url}/#/account`);
    await page.getByRole('heading', { name: 'Delete account' }).waitFor();
    const deleteAccount = async (password: string) => {
      await page.getByLabel('Your password').fill(password);
      await page.getByRole('button', { name: 'Delete account…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete your account?' });
      await dialog.getByLabel(`Type ${user.email} to confirm`).fill(user.email);
      await dialog.getByRole('button', { name: 'Delete account' }).click();
    };
    await deleteAccount('not my password');
    await page.getByText('password is incorrect').waitFor();
    expect((await h.call('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(200);
    await expectAccessible(page, 'account (wrong password)');

    await deleteAccount(user.password);
    await page.getByRole('heading', { name: 'Sign in to Sightline' }).waitFor();
    expect((await h.call('POST', '/api/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(401);
  }, 60_000);
});
