import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRdnsVerifier, rdnsSuffixesOf } from '../../src/ingest/enrich/bot-rdns.js';
import { verifyCrawler } from '../../src/ingest/enrich/bots.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { closeHarness, createHarness, type Harness } from '../helpers/harness.js';

const YANDEX = 'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)';
const BAIDU = 'Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)';

let dns: TestDnsServer;
let resolver: Resolver;
let h: Harness;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([dns.address]);
  // 198.51.100.7: a real Yandex crawler (PTR and forward lookup agree).
  dns.records.ptr.set('198.51.100.7', ['spider-198-51-100-7.yandex.com']);
  dns.records.a.set('spider-198-51-100-7.yandex.com', ['198.51.100.7']);
  // 198.51.100.8: a PTR record its owner wrote to look like Yandex, which does not resolve back.
  dns.records.ptr.set('198.51.100.8', ['spider-1.yandex.com']);
  dns.records.a.set('spider-1.yandex.com', ['198.51.100.200']);
  // 198.51.100.9: confirmed, but under a look-alike domain.
  dns.records.ptr.set('198.51.100.9', ['crawler.notyandex.com']);
  dns.records.a.set('crawler.notyandex.com', ['198.51.100.9']);
  h = await createHarness({ env: { TRUST_PROXY: '1' } });
});
afterAll(async () => {
  await dns.close();
  await closeHarness();
});

describe('forward-confirmed reverse DNS', () => {
  it('knows which operators document it, and not for agents that run anywhere', () => {
    expect(rdnsSuffixesOf('yandexbot')).toContain('yandex.com');
    expect(rdnsSuffixesOf('googlebot')).toContain('googlebot.com');
    expect(rdnsSuffixesOf('claudebot')).toBeUndefined();
    expect(rdnsSuffixesOf('headless-chrome')).toBeUndefined();
    expect(rdnsSuffixesOf('no-such-bot')).toBeUndefined();
  });

  it('verifies a confirmed name under the operator domain, and nothing else', async () => {
    const rdns = createRdnsVerifier(resolver);
    expect(await verifyCrawler('yandexbot', '198.51.100.7', { rdns })).toBe(true);
    expect(await verifyCrawler('yandexbot', '198.51.100.8', { rdns })).toBe(false);
    expect(await verifyCrawler('yandexbot', '198.51.100.9', { rdns })).toBe(false);
    expect(await verifyCrawler('yandexbot', '198.51.100.10', { rdns })).toBe(false);
    // The right operator only: a Yandex name does not verify a Baidu claim.
    expect(await verifyCrawler('baiduspider', '198.51.100.7', { rdns })).toBe(false);
    // Without a resolver (Workers) only ranges and Cloudflare's flag count.
    expect(await verifyCrawler('yandexbot', '198.51.100.7', {})).toBe(false);
    expect(await verifyCrawler('yandexbot', '198.51.100.7', { cfVerified: true })).toBe(true);
  });

  it('asks DNS once per address while the answer is fresh', async () => {
    let t = 0;
    const rdns = createRdnsVerifier(resolver, { ttlMs: 1000, now: () => t });
    dns.questions.length = 0;
    for (let i = 0; i < 5; i++) expect(await rdns.verify('198.51.100.7', ['yandex.com'])).toBe(true);
    expect(dns.questions).toEqual(['PTR 7.100.51.198.in-addr.arpa', 'A spider-198-51-100-7.yandex.com']);
    t = 1001;
    await rdns.verify('198.51.100.7', ['yandex.com']);
    expect(dns.questions).toHaveLength(4);
  });

  it('does not hold a request for a slow answer, and uses it once it came', async () => {
    const rdns = createRdnsVerifier(resolver, { waitMs: 50 });
    dns.delayMs = 300;
    try {
      const started = performance.now();
      expect(await rdns.verify('198.51.100.7', ['yandex.com'])).toBe(false);
      expect(performance.now() - started).toBeLessThan(250);
      await new Promise((r) => setTimeout(r, 800));
      expect(await rdns.verify('198.51.100.7', ['yandex.com'])).toBe(true);
    } finally {
      dns.delayMs = 0;
    }
  });

  it('marks tracker and server-side bot hits verified through the app', async () => {
    h.deps.dns = resolver;
    const owner = await h.user('rdns');
    const domain = h.domain('rdns');
    const site = (await (await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'R', domain } })).json()).id;
    for (const ip of ['198.51.100.7', '198.51.100.8']) {
      const res = await h.app.request('/api/event', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'User-Agent': YANDEX, 'X-Forwarded-For': ip },
        body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/from-${ip}` }),
      });
      expect(res.headers.get('x-sightline-dropped')).toBe('bot');
    }
    const hits = await h.call('POST', `/api/v1/projects/${domain}/hits`, {
      token: owner.writeKey,
      body: [{ path: '/logged', userAgent: YANDEX, ip: '198.51.100.7' }, { path: '/logged-baidu', userAgent: BAIDU, ip: '198.51.100.7' }],
    });
    expect(await hits.json()).toMatchObject({ bots: 2 });
    const rs = await h.deps.clickhouse.query({
      query: 'SELECT path, bot_slug, verified FROM bot_hits WHERE project_id = {id:String} ORDER BY path',
      query_params: { id: site },
      format: 'JSONEachRow',
    });
    expect(await rs.json()).toEqual([
      { path: '/from-198.51.100.7', bot_slug: 'yandexbot', verified: 1 },
      { path: '/from-198.51.100.8', bot_slug: 'yandexbot', verified: 0 },
      { path: '/logged', bot_slug: 'yandexbot', verified: 1 },
      { path: '/logged-baidu', bot_slug: 'baiduspider', verified: 0 },
    ]);
  });
});
