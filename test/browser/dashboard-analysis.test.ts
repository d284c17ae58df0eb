/**
 * The dashboard's analysis features in headless Chromium (playwright-core driving
 * /usr/bin/chromium) against the real app (real Redis, embedded ClickHouse) over HTTP: a known
 * dataset is imported, then filters (click a source), the URL round trip (reload, Back),
 * comparison, a custom range picked with the keyboard only, shortcuts, details with search and
 * CSV, realtime and the public page. Expected numbers are the API's own answers to the same
 * filtered questions, asked in the test. axe-core runs on every state (no serious or critical
 * violation); screenshots at phone (390×844) and desktop (1280×800) widths go to test-artifacts/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeHarness, createHarness, listen, type Harness, type TestUser } from '../helpers/harness.js';

const ARTIFACTS = 'test-artifacts';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ZONE = 'Europe/Berlin';

let h: Harness;
let app: { url: string; close(): Promise<void> };
let browser: Browser;
let page: Page;
let user: TestUser;
let domain: string;

type Stats = { visitors: number; pageviews: number; sessions: number; bounceRate: number | null; viewsPerVisit: number | null; comparison?: Stats };
type Ranked = { data: { path: string; pageviews: number; visitors: number }[] };

/** The signed-in API's JSON answer. */
async function apiJson<T>(path: string): Promise<T> {
  const res = await h.call('GET', `/api/v1/projects/${domain}/${path}`, { token: user.readKey });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

/** Serious and critical axe-core (WCAG 2.1 A/AA) violations, injected with addScriptTag (the CSP allows no inline script, so it goes through the protocol). */
async function expectAccessible(p: Page, label: string): Promise<void> {
  await p.addScriptTag({ content: AXE_SOURCE }).catch(() => p.evaluate(AXE_SOURCE));
  const found = await p.evaluate(async () => {
    const result = await (window as any).axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')).join(' | ')}`);
  });
  expect(found, `axe on ${label}`).toEqual([]);
}

async function shoot(p: Page, name: string): Promise<void> {
  for (const [label, size] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await p.setViewportSize(size);
    await p.waitForTimeout(200);
    await p.screenshot({ path: `${ARTIFACTS}/analysis-${name}-${label}.png`, fullPage: true });
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} overflows horizontally at ${label} width`).toBeLessThanOrEqual(1);
  }
  await p.setViewportSize(DESKTOP);
}

const card = (p: Page, title: string) => p.getByRole('region', { name: title, exact: true });

/** The headline as {label: value text}. */
async function headlineOf(p: Page): Promise<Record<string, string>> {
  await card(p, 'Overview').locator('.stat').first().waitFor();
  await expect.poll(() => card(p, 'Overview').locator('.card-body').getAttribute('aria-busy')).toBe('false');
  return card(p, 'Overview').locator('.stat').evaluateAll((stats) =>
    Object.fromEntries(stats.map((s) => [s.querySelector('dt')!.textContent!, s.querySelector('.stat-value')!.textContent!])),
  );
}

/** What the headline should read for a stats answer. */
const expectedHeadline = (s: Stats) => ({
  Visitors: String(s.visitors),
  Visits: String(s.sessions),
  Pageviews: String(s.pageviews),
  'Views per visit': s.viewsPerVisit === null ? '—' : s.viewsPerVisit.toFixed(2),
  'Bounce rate': s.bounceRate === null ? '—' : `${Math.round(s.bounceRate * 100)}%`,
});

/** The rows of a card's table: cell texts, once the card has settled. */
async function tableRows(p: Page, title: string): Promise<string[][]> {
  const c = card(p, title);
  await expect.poll(() => c.locator('.card-body').getAttribute('aria-busy')).toBe('false');
  return c.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent!.trim())));
}

const hashParams = (p: Page) => new URLSearchParams(new URL(p.url()).hash.split('?')[1] ?? '');

/** A Berlin date `days` before today, YYYY-MM-DD. */
const berlinDate = (days: number) => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(new Date(Date.now() - days * 86_400_000));

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  h = await createHarness();
  app = await listen(h.app);
  user = await h.user('analysis');
  domain = h.domain('an');
  const created = await h.call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Analysis shop', domain, timeZone: ZONE } });
  expect(created.status).toBe(201);
  // A known dataset: visits from google, a newsletter (UTM), news.example.org and direct, in three
  // countries, over the last hours (and 10 days ago, for the comparison), plus two visitors now.
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  const visit = (id: string, minutesAgo: number, paths: string[], extra: Record<string, unknown>) =>
    paths.map((path, i) => ({ timestamp: at(minutesAgo - i), kind: 'pageview', visitorId: id, sessionId: `${id}-s`, url: `https://${domain}${path}`, ...extra }));
  const de = { countryCode: 'DE', region: 'Berlin', city: 'Berlin', browser: 'Firefox', os: 'Linux', device: 'Desktop' };
  const fr = { countryCode: 'FR', region: 'Île-de-France', city: 'Paris', browser: 'Safari', os: 'iOS', device: 'Mobile' };
  const us = { countryCode: 'US', region: 'California', city: 'San Francisco', browser: 'Chrome', os: 'macOS', device: 'Desktop' };
  const google = { referrer: 'https://www.google.com/search?q=shop' };
  const lines = [
    ...visit('g1', 300, ['/', '/pricing', '/docs'], { ...de, ...google }),
    ...visit('g2', 240, ['/pricing'], { ...fr, ...google }),
    ...visit('g3', 200, ['/', '/pricing'], { ...us, ...google }),
    ...visit('n1', 180, ['/blog/launch', '/'], { ...de, referrer: 'https://news.example.org/post' }),
    ...visit('d1', 150, ['/'], fr),
    ...visit('d2', 120, ['/docs', '/docs/install'], us),
    ...visit('m1', 100, ['/?utm_source=newsletter&utm_medium=email&utm_campaign=%3Dspring'], de),
    ...visit('old1', 10 * 1440, ['/', '/pricing'], { ...de, ...google }),
    ...visit('old2', 10 * 1440 + 60, ['/docs'], fr),
    { timestamp: at(295), kind: 'custom', name: 'Signup', visitorId: 'g1', sessionId: 'g1-s', url: `https://${domain}/pricing`, props: { plan: 'pro' }, ...de },
    { timestamp: at(199), kind: 'custom', name: 'Signup', visitorId: 'g3', sessionId: 'g3-s', url: `https://${domain}/pricing`, props: { plan: 'free' }, ...us },
    ...visit('live1', 2, ['/pricing'], de),
    ...visit('live2', 1, ['/docs'], { ...fr, ...google }),
  ];
  const imported = await h.call('POST', `/api/v1/projects/${domain}/import`, { token: user.writeKey, body: lines.map((l) => JSON.stringify(l)).join('\n'), headers: { 'Content-Type': 'application/x-ndjson' } });
  expect(await imported.json()).toMatchObject({ imported: lines.length, rejected: 0 });

  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu'] });
  page = await (await browser.newContext({ viewport: DESKTOP, locale: 'en-US' })).newPage();
  page.on('pageerror', (err) => {
    throw err;
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await closeHarness();
});

describe('dashboard analysis in a real browser', () => {
  it('signs in and shows the API’s numbers for the period', async () => {
    await page.goto(`${app.url}/`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.goto(`${app.url}/#/p/${domain}?period=7d`);
    const stats = await apiJson<Stats>('stats?period=7d');
    expect(stats.visitors).toBe(9);
    await expect.poll(() => headlineOf(page), { timeout: 20_000 }).toMatchObject(expectedHeadline(stats));
    const pages = await apiJson<Ranked>('pages?period=7d&limit=10');
    await expect.poll(() => tableRows(page, 'Top pages')).toEqual(pages.data.map((r) => [r.path, String(r.pageviews), String(r.visitors)]));
    // Realtime: the count and the "now" pages are GET realtime's.
    const realtime = await apiJson<{ visitors: number; pages: { path: string }[] }>('realtime');
    expect(realtime.visitors).toBe(2);
    await expect.poll(() => page.locator('.realtime').textContent()).toBe('2 current visitors');
    await expect.poll(() => card(page, 'Current visitors').textContent()).toContain('/docs');
    await expectAccessible(page, 'overview');
    await shoot(page, 'overview');
  }, 90_000);

  it('clicking a source filters every card; the URL keeps the view across a reload, and Back removes the filter', async () => {
    await card(page, 'Top sources').getByRole('button', { name: 'google.com', exact: true }).click();
    await page.getByRole('list', { name: 'Active filters' }).getByText('Source is google.com').waitFor();
    expect(hashParams(page).get('filters')).toBe('source==google.com');
    expect(hashParams(page).get('period')).toBe('7d');

    const q = `period=7d&filters=${encodeURIComponent('source==google.com')}`;
    const stats = await apiJson<Stats>(`stats?${q}`);
    const pages = await apiJson<Ranked>(`pages?${q}&limit=10`);
    expect(stats.visitors).toBe(4);
    const expectedPages = pages.data.map((r) => [r.path, String(r.pageviews), String(r.visitors)]);
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(stats));
    await expect.poll(() => tableRows(page, 'Top pages')).toEqual(expectedPages);
    // Countries follow too: google's visitors came from DE, FR and US.
    await expect.poll(async () => (await tableRows(page, 'Locations')).length).toBe(3);
    await expectAccessible(page, 'filtered');
    await shoot(page, 'filtered');

    await page.reload();
    await page.getByRole('list', { name: 'Active filters' }).getByText('Source is google.com').waitFor();
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(stats));
    await expect.poll(() => tableRows(page, 'Top pages')).toEqual(expectedPages);

    await page.goBack();
    await expect.poll(() => hashParams(page).get('filters')).toBeNull();
    await expect.poll(() => page.getByRole('list', { name: 'Active filters' }).count()).toBe(0);
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(await apiJson<Stats>('stats?period=7d')));
    await page.goForward();
    await page.getByText('Source is google.com').waitFor();
    // A chip's × removes its filter.
    await page.getByRole('button', { name: 'Remove filter Source is google.com' }).click();
    await expect.poll(() => hashParams(page).get('filters')).toBeNull();
  }, 90_000);

  it('adds filters from the filter menu (is not, contains) and from other tabs', async () => {
    await page.getByRole('button', { name: 'Add filter' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a filter' });
    await dialog.getByLabel('Dimension').selectOption('page');
    await dialog.getByLabel('Operator').selectOption('contains');
    await dialog.getByLabel('Value').fill('docs');
    await expectAccessible(page, 'filter menu');
    await dialog.getByRole('button', { name: 'Apply filter' }).click();
    await page.getByText('Page contains docs').waitFor();
    expect(hashParams(page).get('filters')).toBe('page~=docs');
    const stats = await apiJson<Stats>(`stats?period=7d&filters=${encodeURIComponent('page~=docs')}`);
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(stats));
    // A device from the Devices card's tab adds a second filter.
    await card(page, 'Devices').getByRole('button', { name: 'Mobile', exact: true }).click();
    await page.getByText('Device is Mobile').waitFor();
    expect(hashParams(page).get('filters')).toBe('page~=docs;device==Mobile');
    const both = await apiJson<Stats>(`stats?period=7d&filters=${encodeURIComponent('page~=docs;device==Mobile')}`);
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(both));
    // "is not" from the menu, with two values.
    await page.getByRole('button', { name: 'Add filter' }).click();
    await dialog.getByLabel('Dimension').selectOption('country');
    await dialog.getByLabel('Operator').selectOption('is_not');
    await dialog.getByLabel('Value').fill('DE|US');
    await dialog.getByRole('button', { name: 'Apply filter' }).click();
    await page.getByText('Country is not DE or US').waitFor();
    expect(hashParams(page).get('filters')).toBe('page~=docs;device==Mobile;country!=DE|US');
    const three = await apiJson<Stats>(`stats?period=7d&filters=${encodeURIComponent('page~=docs;device==Mobile;country!=DE|US')}`);
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(three));
    await page.getByRole('button', { name: 'Clear all filters' }).click();
    await expect.poll(() => hashParams(page).get('filters')).toBeNull();
  }, 60_000);

  it('compares with the previous period: headline changes, a dashed series, row changes', async () => {
    await page.getByLabel('Compare with').selectOption('previous_period');
    await expect.poll(() => hashParams(page).get('compare')).toBe('previous_period');
    const stats = await apiJson<Stats>('stats?period=7d&compare=previous_period');
    const prev = stats.comparison!;
    expect(prev.visitors).toBe(2);
    const pct = (now: number, before: number) => `+${Math.round(((now - before) / before) * 100)}%`;
    const visitors = card(page, 'Overview').locator('.stat').filter({ hasText: 'Visitors' }).locator('.change');
    await expect.poll(() => visitors.evaluate((el) => el.firstChild!.textContent)).toBe(pct(stats.visitors, prev.visitors));
    await expect.poll(() => card(page, 'Visitors and pageviews').locator('.u-legend').textContent()).toContain('Visitors (compared)');
    const pages = await apiJson<{ data: { path: string; pageviews: number; comparison: { pageviews: number } }[] }>('pages?period=7d&limit=10&compare=previous_period');
    const pricing = pages.data.find((r) => r.path === '/pricing')!;
    await expect.poll(async () => (await tableRows(page, 'Top pages')).find((r) => r[0] === '/pricing')?.[3]).toBe(pct(pricing.pageviews, pricing.comparison.pageviews));
    await expectAccessible(page, 'compare');
    await shoot(page, 'compare');
  }, 60_000);

  it('picks a custom range with the keyboard only, and period shortcuts switch presets', async () => {
    await page.getByLabel('Period').focus();
    await page.keyboard.press('End');
    const from = page.getByLabel('From', { exact: true });
    await expect.poll(() => from.evaluate((el) => el === document.activeElement)).toBe(true);
    await expectAccessible(page, 'custom range open');
    await shoot(page, 'custom-range');
    const [y, m, d] = berlinDate(2).split('-');
    await page.keyboard.type(`${m}${d}${y}`);
    expect(await from.inputValue()).toBe(berlinDate(2));
    // Tab walks the date field's parts (month, day, year), then on to the next field.
    const to = page.getByLabel('To', { exact: true });
    const focusedOn = (l: typeof to) => l.evaluate((el) => el === document.activeElement);
    for (let i = 0; i < 4 && !(await focusedOn(to)); i++) await page.keyboard.press('Tab');
    expect(await focusedOn(to)).toBe(true);
    const [ty, tm, td] = berlinDate(0).split('-');
    await page.keyboard.type(`${tm}${td}${ty}`);
    const apply = page.getByRole('button', { name: 'Apply range' });
    for (let i = 0; i < 4 && !(await focusedOn(apply)); i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => hashParams(page).get('period')).toBe('custom');
    expect(hashParams(page).get('from')).toBe(berlinDate(2));
    expect(hashParams(page).get('to')).toBe(berlinDate(0));
    const stats = await apiJson<Stats>(`stats?period=custom&from=${berlinDate(2)}&to=${berlinDate(0)}`);
    expect(stats.visitors).toBe(9);
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(stats));
    // The other cards follow the custom range too (no "Shown for" note); bots take presets only and say so.
    for (const title of ['Goals', 'Core Web Vitals', 'Recent visitors']) await expect.poll(() => card(page, title).locator('.note').textContent(), title).toBe('');
    await expect.poll(() => card(page, 'Bot traffic').locator('.note').textContent()).toMatch(/^Shown for: /);
    const recent = await apiJson<{ data: { visitorId: string }[] }>(`visitors?period=custom&from=${berlinDate(2)}&to=${berlinDate(0)}&limit=10`);
    await expect.poll(() => card(page, 'Recent visitors').locator('li').count()).toBe(recent.data.length);

    // Shortcuts: "m" is the last 30 days, "a" all time; not while typing in a field.
    await page.locator('h1').first().click();
    await page.keyboard.press('m');
    await expect.poll(() => hashParams(page).get('period')).toBeNull();
    await expect.poll(() => page.getByLabel('Period').inputValue()).toBe('30d');
    await page.keyboard.press('a');
    await expect.poll(() => hashParams(page).get('period')).toBe('all');
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(await apiJson<Stats>('stats?period=all')));
    await page.getByLabel('Compare with').selectOption('');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('dialog', { name: 'Add a filter' }).getByLabel('Value').press('w');
    await page.keyboard.press('Escape');
    expect(hashParams(page).get('period')).toBe('all');
  }, 60_000);

  it('opens the full list: paging, server-side search, CSV of exactly the rows shown', async () => {
    await page.goto(`${app.url}/#/p/${domain}?period=7d`);
    await card(page, 'Top pages').getByRole('button', { name: 'Details: Pages' }).click();
    const dialog = page.getByRole('dialog', { name: 'Pages' });
    const all = await apiJson<{ data: { page: string; pageviews: number; visitors: number }[] }>('breakdown?period=7d&dimension=page&metrics=pageviews,visitors&limit=100');
    await expect.poll(() => dialog.locator('tbody tr').count()).toBe(all.data.length);
    await expectAccessible(page, 'details open');
    await shoot(page, 'details');
    await dialog.getByLabel('Search page').fill('doc');
    const docs = await apiJson<{ data: { page: string; pageviews: number; visitors: number }[] }>(`breakdown?period=7d&dimension=page&metrics=pageviews,visitors&limit=100&filters=${encodeURIComponent('page~=doc')}`);
    await expect.poll(() => dialog.locator('tbody tr td:first-child').allTextContents()).toEqual(docs.data.map((r) => r.page));
    const download = page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Download CSV' }).click();
    const file = await (await download).path();
    expect(readFileSync(file, 'utf8')).toBe(['page,pageviews,visitors', ...docs.data.map((r) => `${r.page},${r.pageviews},${r.visitors}`)].join('\r\n') + '\r\n');
    await page.keyboard.press('Escape');

    // More than a page of rows: 100 first, "Load more" fetches the next page (offset=100).
    const at = new Date(Date.now() - 30 * 60_000).toISOString();
    const many = Array.from({ length: 120 }, (_, i) => ({ timestamp: at, kind: 'pageview', visitorId: 'pager', sessionId: 'pager-s', url: `https://${domain}/archive/${String(i).padStart(3, '0')}` }));
    const imported = await h.call('POST', `/api/v1/projects/${domain}/import`, { token: user.writeKey, body: many.map((l) => JSON.stringify(l)).join('\n'), headers: { 'Content-Type': 'application/x-ndjson' } });
    expect(await imported.json()).toMatchObject({ imported: 120 });
    await card(page, 'Top pages').getByRole('button', { name: 'Details: Pages' }).click();
    const pagesDialog = page.getByRole('dialog', { name: 'Pages' });
    await expect.poll(() => pagesDialog.locator('tbody tr').count()).toBe(100);
    const total = (await apiJson<{ data: unknown[] }>('breakdown?period=7d&dimension=page&metrics=pageviews,visitors&limit=1000')).data.length;
    expect(total).toBe(125);
    await pagesDialog.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => pagesDialog.locator('tbody tr').count()).toBe(total);
    expect(await pagesDialog.getByRole('button', { name: 'Load more' }).isVisible()).toBe(false);
    await pagesDialog.getByText('125 rows shown.').waitFor();
    await page.keyboard.press('Escape');

    // A UTM campaign of "=spring" is written as text, never as a formula.
    await card(page, 'Top sources').getByRole('tab', { name: 'UTM' }).click();
    await card(page, 'Top sources').getByLabel('UTM parameter').selectOption({ label: 'UTM campaign' });
    await card(page, 'Top sources').getByRole('button', { name: '=spring' }).waitFor();
    await card(page, 'Top sources').getByRole('button', { name: 'Details: UTM' }).click();
    const utm = page.getByRole('dialog', { name: 'UTM campaign' });
    await expect.poll(() => utm.locator('tbody tr').count()).toBe(1);
    const csv = page.waitForEvent('download');
    await utm.getByRole('button', { name: 'Download CSV' }).click();
    expect(readFileSync(await (await csv).path(), 'utf8')).toBe(`utmCampaign,visitors\r\n"'=spring",1\r\n`);
    await page.keyboard.press('Escape');
  }, 60_000);

  it('breaks an event down by a property and filters by its value', async () => {
    const events = card(page, 'Events');
    await events.getByRole('tab', { name: 'Properties' }).click();
    await events.getByLabel('Property').fill('plan');
    await events.getByRole('button', { name: 'Show property' }).click();
    const expected = await apiJson<{ data: { 'prop:plan': string; visitors: number }[] }>(`breakdown?period=7d&dimension=${encodeURIComponent('prop:plan')}&metrics=visitors,events&filters=${encodeURIComponent('event==Signup')}`);
    expect(expected.data.map((r) => r['prop:plan']).sort()).toEqual(['free', 'pro']);
    await events.getByRole('button', { name: 'pro', exact: true }).click();
    await page.getByText('Property plan is pro').waitFor();
    expect(hashParams(page).get('filters')).toBe('event==Signup;prop:plan==pro');
    const stats = await apiJson<Stats>(`stats?period=7d&filters=${encodeURIComponent('event==Signup;prop:plan==pro')}`);
    await expect.poll(() => headlineOf(page)).toMatchObject(expectedHeadline(stats));
  }, 60_000);

  it('the public page follows filters and comparison from its URL, read-only', async () => {
    await h.call('PATCH', `/api/v1/projects/${domain}`, { token: user.writeKey, body: { publicStatsEnabled: true } });
    const anon = await (await browser.newContext({ viewport: DESKTOP })).newPage();
    anon.on('pageerror', (err) => {
      throw err;
    });
    await anon.goto(`${app.url}/share/${domain}#?period=7d&filters=${encodeURIComponent('source==google.com')}`);
    await anon.getByText('Source is google.com').waitFor();
    const stats = await apiJson<Stats>(`stats?period=7d&filters=${encodeURIComponent('source==google.com')}`);
    await expect.poll(() => headlineOf(anon), { timeout: 20_000 }).toMatchObject(expectedHeadline(stats));
    await card(anon, 'Top sources').getByRole('tab', { name: 'Channels' }).click();
    await expect.poll(() => tableRows(anon, 'Top sources')).toEqual([['Organic Search', '4']]);
    await card(anon, 'Locations').getByRole('button', { name: /France/ }).click();
    await anon.getByText('Country is FR').waitFor();
    expect(await anon.getByRole('region', { name: 'Recent visitors' }).count()).toBe(0);
    expect(await anon.getByRole('region', { name: 'Funnels' }).count()).toBe(0);
    await expectAccessible(anon, 'share page');
    await shoot(anon, 'share');
    await anon.close();
  }, 60_000);

  it('adds a Hostnames tab once a second hostname is seen, listing what breakdown answers', async () => {
    await page.goto(`${app.url}/#/p/${domain}?period=7d`);
    await card(page, 'Top pages').getByRole('tab', { name: 'Exit pages' }).waitFor();
    // One hostname so far: no tab.
    expect(await card(page, 'Top pages').getByRole('tab', { name: 'Hostnames' }).count()).toBe(0);
    const docs = { timestamp: new Date(Date.now() - 30 * 60_000).toISOString(), kind: 'pageview', visitorId: 'h1', sessionId: 'h1-s', url: `https://docs.${domain}/guide` };
    expect(await (await h.call('POST', `/api/v1/projects/${domain}/import`, { token: user.writeKey, body: JSON.stringify(docs), headers: { 'Content-Type': 'application/x-ndjson' } })).json()).toMatchObject({ imported: 1 });
    await page.reload();
    const tab = card(page, 'Top pages').getByRole('tab', { name: 'Hostnames' });
    await tab.waitFor({ timeout: 20_000 });
    await tab.click();
    const hosts = await apiJson<{ data: { hostname: string; visitors: number }[] }>('breakdown?period=7d&dimension=hostname&limit=10');
    expect(hosts.data.map((r) => r.hostname)).toEqual(expect.arrayContaining([domain, `docs.${domain}`]));
    await expect.poll(() => tableRows(page, 'Top pages').then((rows) => rows.map((r) => r[0]))).toEqual(hosts.data.map((r) => r.hostname));
  }, 60_000);

  it('refreshes the live visitor count every 30 seconds', async () => {
    const live = await (await browser.newContext({ viewport: DESKTOP })).newPage();
    await live.clock.install();
    await live.goto(`${app.url}/share/${domain}`);
    const before = (await apiJson<{ visitors: number }>('realtime')).visitors;
    await expect.poll(() => live.locator('.realtime').textContent()).toBe(`${before} current visitors`);
    const line = { timestamp: new Date().toISOString(), kind: 'pageview', visitorId: 'live3', sessionId: 'live3-s', url: `https://${domain}/now` };
    expect(await (await h.call('POST', `/api/v1/projects/${domain}/import`, { token: user.writeKey, body: JSON.stringify(line), headers: { 'Content-Type': 'application/x-ndjson' } })).json()).toMatchObject({ imported: 1 });
    expect((await apiJson<{ visitors: number }>('realtime')).visitors).toBe(before + 1);
    await live.clock.runFor(29_000);
    expect(await live.locator('.realtime').textContent()).toBe(`${before} current visitors`);
    await live.clock.runFor(2_000);
    await expect.poll(() => live.locator('.realtime').textContent()).toBe(`${before + 1} current visitors`);
    await expect.poll(() => card(live, 'Current visitors').textContent()).toContain('/now');
    await live.close();
  }, 60_000);
});
