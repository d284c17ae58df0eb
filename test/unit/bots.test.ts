import { describe, expect, it } from 'vitest';
import { BOT_IP_RANGES } from '../../src/ingest/enrich/bot-ip-ranges.js';
import { detectBot, verifyBot } from '../../src/ingest/enrich/bots.js';
import { createCidrMatcher, inCidr, isNonPublicIp, parseCidr, parseIp } from '../../src/ingest/enrich/cidr.js';
import { CRAWLERS, findCrawler } from '../../src/ingest/enrich/crawlers.js';

const bytes = (ip: string) => Array.from(parseIp(ip) ?? []);

describe('parseIp', () => {
  it.each([
    ['1.2.3.4', [1, 2, 3, 4]],
    ['0.0.0.0', [0, 0, 0, 0]],
    ['255.255.255.255', [255, 255, 255, 255]],
    [' 66.249.66.1 ', [66, 249, 66, 1]],
    ['::ffff:66.249.66.1', [66, 249, 66, 1]],
    ['::FFFF:1.2.3.4', [1, 2, 3, 4]],
    ['0:0:0:0:0:ffff:102:304', [1, 2, 3, 4]],
    ['::1', [...new Array(15).fill(0), 1]],
    ['::', new Array(16).fill(0)],
    ['2001:db8::8a2e:370:7334', [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0x8a, 0x2e, 0x03, 0x70, 0x73, 0x34]],
    ['2001:DB8:0:0:0:0:0:1', [0x20, 0x01, 0x0d, 0xb8, ...new Array(11).fill(0), 1]],
    ['fe80::1%eth0', [0xfe, 0x80, ...new Array(13).fill(0), 1]],
    ['[2a00:1450:4001::1]', [0x2a, 0x00, 0x14, 0x50, 0x40, 0x01, ...new Array(9).fill(0), 1]],
    ['64:ff9b::192.0.2.33', [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 192, 0, 2, 33]],
  ])('%s', (ip, want) => {
    expect(bytes(ip)).toEqual(want);
  });

  it.each(['', '1.2.3', '1.2.3.4.5', '256.0.0.1', '01.2.3.4', '1..2.3', 'a.b.c.d', '1:2:3:4:5:6:7:8:9', '1::2::3', '12345::', 'g::1', ':::', '1:2:3:4:5:6:7', '::ffff:1.2.3.256', 'localhost'])(
    'rejects %j',
    (ip) => {
      expect(parseIp(ip)).toBeNull();
    },
  );
});

describe('CIDR matching', () => {
  it('matches IPv4 blocks at and inside their bounds only', () => {
    const g = parseCidr('66.249.64.0/19'); // 66.249.64.0 – 66.249.95.255
    const at = (ip: string) => inCidr(parseIp(ip)!, g);
    expect(at('66.249.64.0')).toBe(true);
    expect(at('66.249.79.130')).toBe(true);
    expect(at('66.249.95.255')).toBe(true);
    expect(at('66.249.63.255')).toBe(false);
    expect(at('66.249.96.0')).toBe(false);
    const small = parseCidr('23.98.142.176/28'); // .176 – .191
    expect(inCidr(parseIp('23.98.142.176')!, small)).toBe(true);
    expect(inCidr(parseIp('23.98.142.191')!, small)).toBe(true);
    expect(inCidr(parseIp('23.98.142.175')!, small)).toBe(false);
    expect(inCidr(parseIp('23.98.142.192')!, small)).toBe(false);
  });

  it('matches IPv6 blocks, including prefixes that are not a multiple of 8', () => {
    const g = parseCidr('2001:4860:4801::/48');
    expect(inCidr(parseIp('2001:4860:4801:10::1')!, g)).toBe(true);
    expect(inCidr(parseIp('2001:4860:4801:ffff:ffff:ffff:ffff:ffff')!, g)).toBe(true);
    expect(inCidr(parseIp('2001:4860:4802::1')!, g)).toBe(false);
    const ula = parseCidr('fc00::/7'); // fc00:: – fdff:…
    expect(inCidr(parseIp('fd12:3456::1')!, ula)).toBe(true);
    expect(inCidr(parseIp('fe00::1')!, ula)).toBe(false);
    expect(inCidr(parseIp('fbff::1')!, ula)).toBe(false);
  });

  it('never matches across address families', () => {
    expect(inCidr(parseIp('0.0.0.1')!, parseCidr('::/0'))).toBe(false);
    expect(inCidr(parseIp('::1')!, parseCidr('0.0.0.0/0'))).toBe(false);
    expect(inCidr(parseIp('::ffff:10.1.2.3')!, parseCidr('10.0.0.0/8'))).toBe(true);
  });

  it('treats /0 as everything and a bare address as one host', () => {
    expect(inCidr(parseIp('203.0.113.9')!, parseCidr('0.0.0.0/0'))).toBe(true);
    const one = createCidrMatcher(['107.20.236.150']);
    expect(one('107.20.236.150')).toBe(true);
    expect(one('107.20.236.151')).toBe(false);
    expect(one('not an ip')).toBe(false);
  });

  it.each(['1.2.3.0/33', '::/129', '1.2.3.0/-1', '1.2.3.0/x', '1.2.3/24', '1.2.3.0/24/1', ''])('rejects block %j', (c) => {
    expect(() => parseCidr(c)).toThrow(/Invalid CIDR/);
  });

  it('recognises non-public addresses', () => {
    for (const ip of ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '127.0.0.1', '169.254.1.1', '100.64.0.1', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:192.168.0.1'])
      expect(isNonPublicIp(ip), ip).toBe(true);
    for (const ip of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '66.249.66.1', '2a00:1450:4001::1'])
      expect(isNonPublicIp(ip), ip).toBe(false);
  });
});

describe('verifyBot', () => {
  it.each([
    ['googlebot', '66.249.66.1', true],
    ['googlebot', '66.249.96.1', false],
    ['googlebot', '2001:4860:4801:10::1', true],
    ['googlebot', '::ffff:66.249.66.1', true],
    ['googlebot', '2001:4860:4802::1', false],
    ['googlebot', '1.2.3.4', false],
    ['googlebot-image', '66.249.70.5', true],
    ['bingbot', '157.55.39.5', true],
    ['bingbot', '40.77.167.100', true],
    ['bingbot', '157.55.40.1', false],
    ['gptbot', '20.171.206.10', true],
    ['gptbot', '52.230.152.44', true],
    ['gptbot', '66.249.66.1', false],
    ['chatgpt-user', '23.98.142.180', true],
    ['chatgpt-user', '23.98.142.192', false],
    ['oai-searchbot', '20.42.10.180', true],
    ['perplexitybot', '107.20.236.150', true],
    ['perplexitybot', '107.20.236.151', false],
    ['applebot', '17.58.101.1', true],
    ['applebot', '18.0.0.1', false],
    ['claudebot', '160.79.104.10', false],
    ['unknown-bot', '66.249.66.1', false],
    ['no-such-slug', '66.249.66.1', false],
    ['googlebot', 'garbage', false],
  ])('%s from %s → %s', (slug, ip, want) => {
    expect(verifyBot(slug, ip)).toBe(want);
  });

  it('counts Cloudflare verification whatever the IP', () => {
    expect(verifyBot('claudebot', '192.0.2.1', { cfVerified: true })).toBe(true);
    expect(verifyBot('googlebot', '1.2.3.4', { cfVerified: false })).toBe(false);
  });
});

describe('detectBot', () => {
  it('names bots the table misses after their bot token, in category other', () => {
    expect(detectBot('Mozilla/5.0 (compatible; Some_NewBot/2.1; +https://example.org/about)')).toEqual({
      slug: 'some-newbot',
      name: 'Some_NewBot',
      category: 'other',
    });
  });

  it('falls back to unknown-bot when the UA has no usable bot token', () => {
    expect(detectBot('Mozilla/5.0 (compatible; Barkrowler/0.9; +https://babbar.tech/crawler)')).toEqual({
      slug: 'unknown-bot',
      name: 'Unknown bot',
      category: 'other',
    });
    expect(detectBot('Mozilla/5.0 (compatible; Fetcher/1.0; +http://example.com/robot.html)')?.slug).toBe('unknown-bot');
  });

  it('reports the operator of known crawlers', () => {
    expect(detectBot('Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)')).toEqual({
      slug: 'claudebot',
      name: 'ClaudeBot',
      category: 'training',
      operator: 'Anthropic',
    });
  });

  it('leaves an empty UA to the caller (not a bot by isbot)', () => {
    expect(detectBot('')).toBeNull();
  });
});

describe('crawler table', () => {
  it('has unique slugs and lower-case tokens', () => {
    expect(new Set(CRAWLERS.map((c) => c.slug)).size).toBe(CRAWLERS.length);
    for (const c of CRAWLERS) for (const t of c.tokens) expect(t).toBe(t.toLowerCase());
  });

  it('points only at range lists that exist and parse', () => {
    for (const c of CRAWLERS) if (c.ranges) expect(BOT_IP_RANGES).toHaveProperty(c.ranges);
    for (const list of Object.values(BOT_IP_RANGES)) for (const cidr of list) expect(() => parseCidr(cidr)).not.toThrow();
  });

  it('finds each crawler by its own token (no earlier entry shadows it)', () => {
    for (const c of CRAWLERS) for (const t of c.tokens) expect(findCrawler(`x ${t.toUpperCase()} y`)?.slug, t).toBe(c.slug);
  });
});
