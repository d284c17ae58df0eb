import { describe, expect, it } from 'vitest';
import corpus from '../fixtures/user-agents.json' with { type: 'json' };
import { createBotDetector, detectBot } from '../../src/ingest/enrich/bots.js';
import { createUaParser, parseUserAgent } from '../../src/ingest/enrich/user-agent.js';

/** A browser entry states what a person would read off the UA; a bot entry its category and slug. */
interface HumanEntry {
  ua: string;
  browser: string;
  browserVersion?: string;
  os: string;
  osVersion?: string;
  device: 'Mobile' | 'Desktop' | 'Tablet' | 'Unknown';
  note?: string;
}
interface BotEntry {
  ua: string;
  bot: { category: string; slug: string };
}
type Entry = HumanEntry | BotEntry;

const entries = corpus as Entry[];
const humans = entries.filter((e): e is HumanEntry => !('bot' in e));
const bots = entries.filter((e): e is BotEntry => 'bot' in e);
const parse = createUaParser();
const detectCached = createBotDetector({ maxEntries: 50 });

describe('user-agent corpus', () => {
  it('is large and covers every class it must', () => {
    expect(entries.length).toBeGreaterThanOrEqual(200);
    expect(new Set(entries.map((e) => e.ua)).size).toBe(entries.length);
    expect(new Set(humans.map((e) => e.device))).toEqual(new Set(['Mobile', 'Desktop', 'Tablet', 'Unknown']));
    const oses = new Set(humans.map((e) => e.os));
    for (const os of ['Windows', 'macOS', 'Linux', 'Chrome OS', 'iOS', 'Android']) expect(oses).toContain(os);
    const browsers = new Set(humans.map((e) => e.browser));
    for (const b of ['Chrome', 'Firefox', 'Safari', 'Edge', 'Samsung Internet', 'Opera']) expect(browsers).toContain(b);
    expect(new Set(bots.map((e) => e.bot.category))).toEqual(new Set(['ai_answer', 'indexing', 'training', 'other']));
  });

  describe('browsers parse to the expected browser, OS and device and are not bots', () => {
    it.each(humans.map((e) => [`${e.browser} ${e.browserVersion ?? ''} / ${e.os} / ${e.device}`, e] as const))('%s', (_, e) => {
      const got = parse(e.ua);
      expect({ browser: got.browser, os: got.os, device: got.device }).toEqual({ browser: e.browser, os: e.os, device: e.device });
      if (e.browserVersion !== undefined) expect(got.browserVersion).toBe(e.browserVersion);
      if (e.osVersion !== undefined) expect(got.osVersion).toBe(e.osVersion);
      expect(detectBot(e.ua)).toBeNull();
      expect(detectCached(e.ua)).toBeNull();
    });
  });

  describe('bots are detected with the expected category and slug', () => {
    it.each(bots.map((e) => [`${e.bot.category}/${e.bot.slug}`, e] as const))('%s', (_, e) => {
      const got = detectBot(e.ua);
      expect(got).not.toBeNull();
      expect({ category: got!.category, slug: got!.slug }).toEqual(e.bot);
      expect(got!.name.length).toBeGreaterThan(0);
      const cached = detectCached(e.ua);
      expect(cached).toEqual(got);
      expect(detectCached(e.ua)).toBe(cached);
      expect(Object.isFrozen(cached)).toBe(true);
    });
  });
});

describe('parseUserAgent', () => {
  it('answers Unknown for an empty or blank UA', () => {
    const unknown = { browser: 'Unknown', browserVersion: '', os: 'Unknown', osVersion: '', device: 'Unknown' };
    expect(parseUserAgent('')).toEqual(unknown);
    expect(parseUserAgent('   ')).toEqual(unknown);
    expect(parse('')).toEqual(unknown);
  });

  it('answers Unknown for a UA it cannot read', () => {
    expect(parseUserAgent('totally-made-up-client')).toEqual({
      browser: 'Unknown',
      browserVersion: '',
      os: 'Unknown',
      osVersion: '',
      device: 'Unknown',
    });
  });

  it('reads only the first 500 characters, like ua-parser itself', () => {
    const ua = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
    const padded = ua + ' x'.repeat(5000);
    expect(parse(padded)).toEqual(parse(ua));
    expect(parseUserAgent(padded).browser).toBe('Chrome');
  });
});

describe('createUaParser cache', () => {
  const chrome = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
  const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';
  const safari = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15';

  it('returns the cached (frozen) result for a repeated UA', () => {
    const p = createUaParser({ maxEntries: 10 });
    const first = p(chrome);
    expect(p(chrome)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('is bounded and evicts the least recently used UA', () => {
    const p = createUaParser({ maxEntries: 2 });
    const a = p(chrome);
    const b = p(firefox);
    expect(p(chrome)).toBe(a); // chrome is now the most recent
    p(safari); // evicts firefox, the least recent
    expect(p(chrome)).toBe(a);
    const b2 = p(firefox);
    expect(b2).not.toBe(b);
    expect(b2).toEqual(b);
  });
});
