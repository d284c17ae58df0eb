import { CredentialCache } from '../../auth/key-cache.js';
import { crawlerBySlug } from './crawlers.js';

/**
 * Host-name suffixes that crawler operators document for reverse-DNS verification: the
 * address's PTR name must end in one of them, and that name must resolve back to the address
 * (forward-confirmed reverse DNS). Keyed by operator, as the crawler table names it.
 *
 * - Google:    https://developers.google.com/search/docs/crawling-indexing/verifying-googlebot
 * - Microsoft: https://www.bing.com/webmasters/help/how-to-verify-bingbot-3905dc26
 * - Apple:     https://support.apple.com/en-us/119829
 * - Yandex:    https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html
 * - Baidu:     https://help.baidu.com/question?prod_id=99&class=0&id=3001
 * - Yahoo, Seznam, Huawei (PetalBot), Naver (Yeti), Sogou, Cốc Cốc, Amazon: their crawler pages
 */
export const RDNS_SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  // Not all of googleusercontent.com: anyone's cloud VM reverses to a name under it.
  Google: ['googlebot.com', 'google.com', 'gae.googleusercontent.com'],
  Microsoft: ['search.msn.com'],
  Apple: ['applebot.apple.com'],
  Yandex: ['yandex.ru', 'yandex.net', 'yandex.com'],
  Baidu: ['baidu.com', 'baidu.jp'],
  Yahoo: ['crawl.yahoo.net'],
  Seznam: ['seznam.cz'],
  Huawei: ['petalsearch.com'],
  Naver: ['naver.com'],
  Sogou: ['sogou.com'],
  'Cốc Cốc': ['coccoc.com'],
  Amazon: ['crawl.amazonbot.amazon'],
};

/** Agents that run anywhere: their operator's name verifies nothing about them. */
const NOT_VERIFIABLE = new Set(['headless-chrome']);

/** The suffixes that would verify crawler `slug`, or undefined when its operator documents none. */
export function rdnsSuffixesOf(slug: string): readonly string[] | undefined {
  const crawler = crawlerBySlug(slug);
  return crawler && !NOT_VERIFIABLE.has(slug) ? RDNS_SUFFIXES[crawler.operator] : undefined;
}

/** The DNS questions verification asks (node:dns/promises' Resolver has this shape). */
export interface DnsResolver {
  reverse(ip: string): Promise<string[]>;
  resolve4(host: string): Promise<string[]>;
  resolve6(host: string): Promise<string[]>;
}

export interface RdnsOptions {
  /** A request waits this long for an answer not yet known; the lookup goes on for later hits. */
  waitMs?: number;
  /** How long an address's answer is remembered. */
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

const endsWithDomain = (host: string, suffix: string) => host === suffix || host.endsWith(`.${suffix}`);

/**
 * Forward-confirmed reverse DNS for crawler claims, one lookup per address: PTR names of the
 * address, each kept only when it resolves back to the address. Answers are cached per address
 * (failures too, as "no names"), so a crawler's burst costs one lookup. A request waits at most
 * `waitMs`; a slower answer is still cached for the next hit from that address.
 */
export function createRdnsVerifier(resolver: DnsResolver, opts: RdnsOptions = {}) {
  const waitMs = opts.waitMs ?? 250;
  const ttlMs = opts.ttlMs ?? 6 * 3600_000;
  const maxEntries = opts.maxEntries ?? 10_000;
  const now = opts.now ?? Date.now;
  const cache = new CredentialCache<Promise<string[]>>(ttlMs, maxEntries);

  async function confirmedNames(ip: string): Promise<string[]> {
    const names = await resolver.reverse(ip).catch(() => [] as string[]);
    const family = ip.includes(':') ? 'resolve6' : 'resolve4';
    const confirmed = await Promise.all(
      names.map(async (name) => {
        const host = name.toLowerCase().replace(/\.$/, '');
        const addresses = await resolver[family](host).catch(() => [] as string[]);
        return addresses.includes(ip) ? host : null;
      }),
    );
    return confirmed.filter((h): h is string => h !== null);
  }

  return {
    /** True when `ip` has a forward-confirmed PTR name in one of `suffixes`. */
    async verify(ip: string, suffixes: readonly string[]): Promise<boolean> {
      if (!ip) return false;
      const t = now();
      let names = cache.get(ip, t);
      if (!names) {
        names = confirmedNames(ip);
        cache.set(ip, names, t);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), waitMs);
      });
      try {
        const known = await Promise.race([names, late]);
        return known !== null && known.some((host) => suffixes.some((s) => endsWithDomain(host, s)));
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export type RdnsVerifier = ReturnType<typeof createRdnsVerifier>;
