/**
 * The tracker (GET /script.js) in real headless Chromium, driven by playwright-core.
 *
 * Two loopback servers stand in for the two origins of a real install: a "site" serving test pages,
 * and "analytics" serving the tracker through the real route plus a capturing /api/event that
 * records every body it receives (the real ingestion endpoint is tested on its own). The pages are
 * on another origin than the script, as on a customer's site, so CORS and preflights are real.
 */
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import * as v from 'valibot';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventBody } from '../../src/ingest/event-schema.js';
import { trackerRoutes } from '../../src/tracker/routes.js';

/** Debian's Chromium; CI installs it (.ci/run). Missing is a failure, never a skip. */
const CHROMIUM = '/usr/bin/chromium';

interface Captured {
  body: Record<string, any>;
  contentType: string;
  origin: string;
}

const captured: Captured[] = [];
/** Bodies the real /api/event schema would refuse, with why: the tracker must never send one. */
const refused: { body: unknown; issues: string[] }[] = [];
let preflights = 0;
let browser: Browser;
let context: BrowserContext;
let siteServer: Server;
let analyticsServer: Server;
let siteUrl: string;
let analyticsUrl: string;
let siteCounter = 0;

/** One test page: the attributes on the script tag, markup before it (queue stub) and in the body. */
interface PageSpec {
  site: string;
  attrs?: string;
  head?: string;
  body?: string;
  /** How many copies of the script tag the page has (site owners do paste it twice). */
  copies?: number;
}
const pages = new Map<string, PageSpec>();

/** A page under a fresh site id, reachable at any path below /p/{name}/ (SPA routes included). */
function definePage(spec: Omit<PageSpec, 'site'>): { site: string; url: (path?: string) => string } {
  const site = `site-${++siteCounter}-${Math.random().toString(36).slice(2, 8)}`;
  pages.set(site, { site, ...spec });
  return { site, url: (path = 'home') => `${siteUrl}/p/${site}/${path}` };
}

function renderPage(spec: PageSpec): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Sightline test</title>
${spec.head ?? ''}
${`<script defer src="${analyticsUrl}/script.js" data-site="${spec.site}" ${spec.attrs ?? 'data-allow-localhost'}></script>\n`.repeat(spec.copies ?? 1)}</head><body>
<h1>Sightline tracker test page</h1>
<p style="font-size:20px">A paragraph of text large enough to be the largest contentful paint of this page,
written so the browser has something to measure for LCP and FCP.</p>
${spec.body ?? ''}
</body></html>`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function handleSite(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', siteUrl).pathname;
  const spec = pages.get(path.split('/')[2] ?? '');
  if (path.startsWith('/p/') && spec) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(renderPage(spec));
  } else if (path === '/landing') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>landing</title>landed');
  } else if (path.startsWith('/files/')) {
    // 204 keeps the browser on the page, like a download would.
    res.writeHead(204).end();
  } else {
    res.writeHead(404).end();
  }
}

async function handleAnalytics(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', analyticsUrl).pathname;
  if (path === '/api/event' && req.method === 'OPTIONS') {
    preflights++;
    res.writeHead(204, { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*' }).end();
  } else if (path === '/api/event' && req.method === 'POST') {
    const body = JSON.parse(await readBody(req));
    const check = v.safeParse(EventBody, body);
    if (!check.success) refused.push({ body, issues: check.issues.map((i) => i.message) });
    captured.push({
      body,
      contentType: String(req.headers['content-type'] ?? ''),
      origin: String(req.headers.origin ?? ''),
    });
    res.writeHead(202, { 'access-control-allow-origin': '*' }).end();
  } else if (path === '/script.js') {
    // The real route, as the app mounts it.
    const response = await trackerRoutes().request(path, { headers: req.headers as Record<string, string> });
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(await response.text());
  } else {
    res.writeHead(404).end();
  }
}

async function start(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<[Server, string]> {
  const server = createServer((req, res) => {
    handler(req, res).catch((err) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return [server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`];
}

const eventsOf = (site: string, kind?: string) =>
  captured.filter((e) => e.body.site === site && (!kind || e.body.kind === kind)).map((e) => e.body);

/** Waits until `site` has at least `count` events of `kind`; fails with what did arrive. */
async function waitForEvents(site: string, kind: string, count = 1, timeoutMs = 10_000): Promise<Record<string, any>[]> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = eventsOf(site, kind);
    if (found.length >= count) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`expected ${count} "${kind}" event(s) for ${site}; got ${JSON.stringify(eventsOf(site))}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Makes the page report hidden/visible the way a tab switch does. */
async function setVisibility(page: Page, state: 'hidden' | 'visible'): Promise<void> {
  await page.evaluate((value) => {
    Object.defineProperty(document, 'visibilityState', { value, configurable: true });
    Object.defineProperty(document, 'hidden', { value: value === 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  }, state);
}

/** Loads a page and waits until the tracker has replaced the queue stub with its API. */
async function open(url: string, options: { referer?: string } = {}): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url, options);
  await page.waitForFunction(() => typeof (window as any).sightline?.track === 'function');
  return page;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (CI's .ci/run does).`);
  }
  [siteServer, siteUrl] = await start(handleSite);
  [analyticsServer, analyticsUrl] = await start(handleAnalytics);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(
    [siteServer, analyticsServer].map((s) => s && new Promise<void>((resolve) => s.close(() => resolve()))),
  );
});

beforeEach(async () => {
  context = await browser.newContext();
});

afterEach(async () => {
  await context.close();
  expect(refused, 'events the /api/event schema refuses').toEqual([]);
});

describe('tracker in Chromium', () => {
  it('sends a pageview with site, url, referrer and screen width as text/plain without a preflight', async () => {
    const p = definePage({});
    const url = p.url('home?utm_source=newsletter');
    const page = await open(url, { referer: 'https://news.example.org/story' });
    const [pageview] = await waitForEvents(p.site, 'pageview');
    expect(pageview).toEqual({
      site: p.site,
      kind: 'pageview',
      url,
      referrer: 'https://news.example.org/story',
      screenWidth: await page.evaluate(() => screen.width),
    });
    expect(pageview.screenWidth).toBeGreaterThan(0);
    const raw = captured.find((e) => e.body.site === p.site)!;
    expect(raw.contentType).toMatch(/^text\/plain/);
    expect(raw.origin).toBe(siteUrl);
    expect(preflights).toBe(0);
  });

  it('counts SPA navigations once each and sends leave for the page being left', async () => {
    const p = definePage({});
    const page = await open(p.url('home'));
    await waitForEvents(p.site, 'pageview');
    await sleep(150);
    await page.evaluate(() => history.pushState({}, '', 'pricing'));
    const views = await waitForEvents(p.site, 'pageview', 2);
    expect(views[1].url).toBe(p.url('pricing'));
    expect(views[1].referrer).toBe(p.url('home'));
    const [leave] = await waitForEvents(p.site, 'leave');
    expect(leave.url).toBe(p.url('home'));
    expect(leave.durationMs).toBeGreaterThanOrEqual(100);

    // Same URL again, and a #fragment without data-hash: no new pageview.
    await page.evaluate(() => {
      history.replaceState({ step: 2 }, '', location.href);
      history.pushState({}, '', 'pricing');
      location.hash = 'plans';
    });
    // Back to home (popstate) is a pageview again.
    await page.evaluate(() => history.go(-3));
    const all = await waitForEvents(p.site, 'pageview', 3);
    expect(all.map((v) => v.url)).toEqual([p.url('home'), p.url('pricing'), p.url('home')]);
    await sleep(300);
    expect(eventsOf(p.site, 'pageview')).toHaveLength(3);
  });

  it('counts once when the script is on the page twice', async () => {
    const p = definePage({ copies: 2 });
    const page = await open(p.url('twice'));
    await sleep(50);
    await page.evaluate(() => history.pushState({}, '', 'again'));
    await page.evaluate(() => (window as any).sightline.track('Sentinel'));
    await waitForEvents(p.site, 'custom');
    await sleep(300);
    // Requests travel on parallel connections, so compare what arrived, not in which order.
    expect(eventsOf(p.site).map((e) => e.kind).sort()).toEqual(['custom', 'leave', 'pageview', 'pageview']);
  });

  it('treats #fragment changes as pages with data-hash', async () => {
    const p = definePage({ attrs: 'data-allow-localhost data-hash' });
    const page = await open(p.url('app'));
    await waitForEvents(p.site, 'pageview');
    await page.evaluate(() => {
      location.hash = '#/settings';
    });
    const views = await waitForEvents(p.site, 'pageview', 2);
    expect(views[1].url).toBe(`${p.url('app')}#/settings`);
  });

  it('leave counts only the time the page was visible', async () => {
    const p = definePage({});
    const page = await open(p.url('article'));
    await waitForEvents(p.site, 'pageview');
    await sleep(300);
    await setVisibility(page, 'hidden');
    const [first] = await waitForEvents(p.site, 'leave');
    expect(first.url).toBe(p.url('article'));
    expect(first.durationMs).toBeGreaterThanOrEqual(250);

    await sleep(2500); // hidden: must not count
    await setVisibility(page, 'visible');
    await sleep(200);
    await page.evaluate(() => history.pushState({}, '', 'next'));
    const leaves = await waitForEvents(p.site, 'leave', 2);
    expect(leaves[1].url).toBe(p.url('article'));
    expect(leaves[1].durationMs).toBeGreaterThanOrEqual(150);
    expect(leaves[1].durationMs).toBeLessThan(2300);
  });

  it('sends leave on page close through sendBeacon', async () => {
    const p = definePage({});
    const page = await open(p.url('closing'));
    await waitForEvents(p.site, 'pageview');
    await sleep(200);
    await page.close({ runBeforeUnload: true });
    const [leave] = await waitForEvents(p.site, 'leave');
    expect(leave.durationMs).toBeGreaterThanOrEqual(150);
    expect(leave.url).toBe(p.url('closing'));
  });

  it('sends Core Web Vitals once, on the first hide', async () => {
    const p = definePage({
      body: `<button id="slow" style="font-size:18px">slow</button>
        <script>document.getElementById('slow').addEventListener('click', () => {
          const end = performance.now() + 120; while (performance.now() < end) {}
        });</script>`,
    });
    const page = await open(p.url('vitals'));
    await waitForEvents(p.site, 'pageview');
    // LCP is final once painted; wait until the browser has reported it.
    await page.evaluate(
      () =>
        new Promise<void>((resolve) =>
          new PerformanceObserver(() => resolve()).observe({ type: 'largest-contentful-paint', buffered: true }),
        ),
    );
    // A shift with no input just before it (shifts within 500 ms of input do not count): prepend a block.
    await page.evaluate(
      () =>
        new Promise<void>((resolve) => {
          const block = document.createElement('div');
          block.style.height = '200px';
          document.body.prepend(block);
          new PerformanceObserver((list) => {
            if (list.getEntries().some((e) => !(e as any).hadRecentInput)) resolve();
          }).observe({ type: 'layout-shift', buffered: true });
        }),
    );
    await page.click('#slow');
    // Event timing entries arrive after the next paint; wait for the interaction to be reported.
    await page.evaluate(
      () =>
        new Promise<void>((resolve) =>
          new PerformanceObserver((list) => {
            if (list.getEntries().some((e) => (e as any).interactionId > 0)) resolve();
          }).observe({ type: 'event', buffered: true, durationThreshold: 40 } as PerformanceObserverInit),
        ),
    );
    await page.evaluate(() => history.pushState({}, '', 'after'));
    await setVisibility(page, 'hidden');
    const [event] = await waitForEvents(p.site, 'vitals');
    expect(event.url).toBe(p.url('vitals')); // the vitals belong to the page that was loaded
    const v = event.vitals;
    for (const key of ['ttfb', 'fcp', 'lcp', 'inp', 'cls']) {
      expect(typeof v[key], key).toBe('number');
      expect(v[key], key).toBeGreaterThanOrEqual(0);
    }
    expect(v.fcp).toBeGreaterThanOrEqual(v.ttfb);
    expect(v.lcp).toBeGreaterThanOrEqual(v.fcp);
    expect(v.inp).toBeGreaterThanOrEqual(100);
    expect(v.cls).toBeGreaterThan(0);

    await setVisibility(page, 'visible');
    await setVisibility(page, 'hidden');
    await waitForEvents(p.site, 'leave', 3); // SPA leave, first hide, second hide
    await sleep(200);
    expect(eventsOf(p.site, 'vitals')).toHaveLength(1);
  });

  it('replays calls queued before load, then sends track() and transaction()', async () => {
    const p = definePage({
      head: `<script>
        window.sightline = window.sightline || function () { (sightline.q = sightline.q || []).push(arguments) };
        sightline('track', 'Queued Signup', { plan: 'pro' });
        sightline('transaction', 'Queued Order', 1999, 'EUR', { sku: 'A-1' });
      </script>`,
    });
    const page = await open(p.url('shop'));
    const queued = await waitForEvents(p.site, 'custom');
    expect(queued[0]).toMatchObject({ name: 'Queued Signup', props: { plan: 'pro' }, url: p.url('shop') });
    const [order] = await waitForEvents(p.site, 'transaction');
    expect(order).toMatchObject({ name: 'Queued Order', amountCents: 1999, currency: 'EUR', props: { sku: 'A-1' } });

    await page.evaluate(() => {
      const sl = (window as any).sightline;
      sl.track('Newsletter', { source: 'footer', n: 2 });
      sl.transaction('Upgrade', 4900, 'USD');
      sl('track', 'Via call'); // the stub's call form keeps working after load
    });
    const customs = await waitForEvents(p.site, 'custom', 3);
    expect(customs.slice(1).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { site: p.site, kind: 'custom', url: p.url('shop'), name: 'Newsletter', props: { source: 'footer', n: 2 } },
      { site: p.site, kind: 'custom', url: p.url('shop'), name: 'Via call' },
    ]);
    const orders = await waitForEvents(p.site, 'transaction', 2);
    expect(orders[1]).toEqual({ site: p.site, kind: 'transaction', url: p.url('shop'), name: 'Upgrade', amountCents: 4900, currency: 'USD' });
  });

  const links = () => `
    <a id="doc" href="/files/report.pdf">report</a>
    <a id="zip" href="/files/archive.zip?v=2">archive</a>
    <a id="inner" href="/landing">inner page</a>
    <a id="out" href="http://localhost:${new URL(siteUrl).port}/landing">elsewhere</a>`;

  it('reports downloads and outbound clicks when opted in, even when the click navigates away', async () => {
    const p = definePage({ attrs: 'data-allow-localhost data-outbound data-downloads', body: links() });
    const page = await open(p.url('links'));
    await waitForEvents(p.site, 'pageview');
    await page.click('#doc');
    await page.click('#zip');
    const downloads = await waitForEvents(p.site, 'custom', 2);
    expect(downloads.sort((a, b) => a.props.url.localeCompare(b.props.url))).toEqual([
      expect.objectContaining({ name: 'File Download', props: { url: `${siteUrl}/files/archive.zip?v=2` } }),
      expect.objectContaining({ name: 'File Download', props: { url: `${siteUrl}/files/report.pdf` } }),
    ]);
    await page.click('#out');
    await page.waitForURL(/localhost:\d+\/landing/);
    const all = await waitForEvents(p.site, 'custom', 3);
    expect(all[2]).toMatchObject({
      name: 'Outbound Link: Click',
      props: { url: `http://localhost:${new URL(siteUrl).port}/landing` },
      url: p.url('links'),
    });
    expect(all.filter((e) => e.props?.url?.endsWith('/landing') && !e.props.url.includes('localhost'))).toEqual([]);
  });

  it('a custom extension list replaces the default one', async () => {
    const p = definePage({ attrs: 'data-allow-localhost data-downloads="zip, csv"', body: links() });
    const page = await open(p.url('links'));
    await waitForEvents(p.site, 'pageview');
    await page.click('#doc');
    await page.click('#zip');
    await page.evaluate(() => (window as any).sightline.track('Sentinel'));
    const customs = await waitForEvents(p.site, 'custom', 2);
    await sleep(200);
    expect(eventsOf(p.site, 'custom').map((e) => e.props?.url ?? e.name).sort()).toEqual(['Sentinel', `${siteUrl}/files/archive.zip?v=2`]);
    expect(customs).toHaveLength(2);
  });

  it('reports no clicks without the opt-in attributes', async () => {
    const p = definePage({ body: links() });
    const page = await open(p.url('links'));
    await waitForEvents(p.site, 'pageview');
    await page.click('#doc');
    await page.click('#zip');
    await page.evaluate(() => (window as any).sightline.track('Sentinel'));
    await waitForEvents(p.site, 'custom');
    await page.click('#out');
    await page.waitForURL(/localhost:\d+\/landing/);
    await sleep(500);
    expect(eventsOf(p.site, 'custom').map((e) => e.name)).toEqual(['Sentinel']);
  });

  it('sets no cookies and writes no storage by default', async () => {
    const p = definePage({});
    const page = await open(p.url('private'));
    await waitForEvents(p.site, 'pageview');
    await page.evaluate(() => (window as any).sightline.track('Anything'));
    await waitForEvents(p.site, 'custom');
    expect(await page.evaluate(() => [document.cookie, localStorage.length, sessionStorage.length])).toEqual(['', 0, 0]);
    expect(await context.cookies()).toEqual([]);
    expect(eventsOf(p.site).every((e) => !('visitorId' in e))).toBe(true);
  });

  it('data-persist keeps a random visitor id in localStorage across loads', async () => {
    const p = definePage({ attrs: 'data-allow-localhost data-persist' });
    const page = await open(p.url('one'));
    const [first] = await waitForEvents(p.site, 'pageview');
    const stored = await page.evaluate(() => localStorage.getItem('sightline_id'));
    expect(stored).toMatch(/^[0-9a-z]{16,}$/);
    expect(first.visitorId).toBe(stored);
    await page.goto(p.url('two'));
    const views = await waitForEvents(p.site, 'pageview', 2);
    expect(views[1].visitorId).toBe(stored);
    expect(await context.cookies()).toEqual([]);

    // Another browser profile gets another id.
    const other = await browser.newContext();
    try {
      const otherPage = await other.newPage();
      await otherPage.goto(p.url('three'));
      const all = await waitForEvents(p.site, 'pageview', 3);
      expect(all[2].visitorId).toMatch(/^[0-9a-z]{16,}$/);
      expect(all[2].visitorId).not.toBe(stored);
    } finally {
      await other.close();
    }
  });

  it('ignores localhost unless data-allow-localhost is set', async () => {
    const p = definePage({ attrs: '' });
    const page = await open(p.url('dev'));
    await page.evaluate(() => (window as any).sightline.track('Ignored'));
    await setVisibility(page, 'hidden');
    await sleep(700);
    expect(eventsOf(p.site)).toEqual([]);
  });

  it('waits for a prerendered page to be shown before counting it', async () => {
    const p = definePage({});
    const page = await context.newPage();
    await page.addInitScript(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'prerender', configurable: true });
    });
    await page.goto(p.url('prerendered'));
    await page.waitForLoadState('load');
    await sleep(500);
    expect(eventsOf(p.site)).toEqual([]);
    await setVisibility(page, 'visible');
    const [view] = await waitForEvents(p.site, 'pageview');
    expect(view.url).toBe(p.url('prerendered'));
  });
});
