import { describe, expect, it } from 'vitest';
import { hostBelongsTo, InvalidDomainError, normalizeDomain } from '../../src/projects/domain.js';
import { canonicalTimeZone } from '../../src/projects/timezone.js';

/** The domain normalization of README "Decisions" (issue 2): input → normalized host, or null for a refusal. */
const DOMAIN_TABLE: [input: string, expected: string | null][] = [
  ['HTTPS://WWW.Example.COM:443/path?q#f', 'example.com'],
  ['example.com.', 'example.com'],
  ['münchen.de', 'xn--mnchen-3ya.de'],
  ['user@host.com', 'host.com'],
  ['', null],
  ['a..b', null],
  ['localhost', null],
  [`${'a'.repeat(300)}.com`, null],
];

describe('normalizeDomain', () => {
  it.each(DOMAIN_TABLE)('%s → %s', (input, expected) => {
    if (expected === null) {
      expect(() => normalizeDomain(input)).toThrow(InvalidDomainError);
    } else {
      expect(normalizeDomain(input)).toBe(expected);
    }
  });

  it('strips scheme, userinfo, port, path, query, fragment and surrounding space together', () => {
    expect(normalizeDomain('  http://bob:secret@Shop.Example.org:8080/a/b?x=1#top  ')).toBe('shop.example.org');
    expect(normalizeDomain('//cdn.example.net/x')).toBe('cdn.example.net');
    expect(normalizeDomain('www.example.co.uk')).toBe('example.co.uk');
  });

  it('keeps subdomains other than a leading www', () => {
    expect(normalizeDomain('blog.www.example.com')).toBe('blog.www.example.com');
    expect(normalizeDomain('app.example.com')).toBe('app.example.com');
  });

  it.each([
    ['only a scheme', 'https://'],
    ['spaces inside', 'exa mple.com'],
    ['IPv4 address', '192.168.0.1'],
    ['IPv6 literal', '[::1]'],
    ['label starting with a hyphen', '-bad.example.com'],
    ['label ending with a hyphen', 'bad-.example.com'],
    ['underscore', 'under_score.example.com'],
    ['whitespace only', '   '],
    ['host longer than 253 characters', `${Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.')}.com`],
  ])('refuses %s', (_label, input) => {
    expect(() => normalizeDomain(input)).toThrow(InvalidDomainError);
  });

  it('accepts a 63-character label and refuses a 64-character one', () => {
    expect(normalizeDomain(`${'c'.repeat(63)}.com`)).toBe(`${'c'.repeat(63)}.com`);
    expect(() => normalizeDomain(`${'c'.repeat(64)}.com`)).toThrow(InvalidDomainError);
  });

  it('is idempotent on its own output', () => {
    for (const [input, expected] of DOMAIN_TABLE) {
      if (expected) expect(normalizeDomain(normalizeDomain(input))).toBe(expected);
    }
  });
});

describe('hostBelongsTo', () => {
  it('matches the domain itself and its subdomains only', () => {
    expect(hostBelongsTo('example.com', 'example.com')).toBe(true);
    expect(hostBelongsTo('Blog.Example.com.', 'example.com')).toBe(true);
    expect(hostBelongsTo('notexample.com', 'example.com')).toBe(false);
    expect(hostBelongsTo('example.com.evil.net', 'example.com')).toBe(false);
  });
});

describe('canonicalTimeZone', () => {
  it('keeps valid IANA names, fixes letter case and refuses unknown zones', () => {
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(canonicalTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeNull();
    expect(canonicalTimeZone('')).toBeNull();
    expect(canonicalTimeZone('x'.repeat(65))).toBeNull();
  });
});
