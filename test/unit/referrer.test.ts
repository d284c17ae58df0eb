import { describe, expect, it } from 'vitest';
import { DIRECT, parseUtm, referrerSource } from '../../src/ingest/enrich/referrer.js';

describe('referrerSource', () => {
  it.each([
    // [referrer, page host, expected]
    ['https://www.google.com/', 'example.com', 'google.com'],
    ['https://WWW.Google.COM/search?q=x', 'example.com', 'google.com'],
    ['http://news.ycombinator.com/item?id=1', 'example.com', 'news.ycombinator.com'],
    ['https://t.co/abc', 'example.com', 't.co'],
    ['https://www.bing.com./', 'example.com', 'bing.com'],
    ['https://github.com:443/x', 'example.com', 'github.com'],
    ['https://xn--mnchen-3ya.de/', 'example.com', 'xn--mnchen-3ya.de'],
    ['https://münchen.de/', 'example.com', 'xn--mnchen-3ya.de'],
    // none / unusable
    [undefined, 'example.com', DIRECT],
    ['', 'example.com', DIRECT],
    ['   ', 'example.com', DIRECT],
    ['not a url', 'example.com', DIRECT],
    ['/relative/path', 'example.com', DIRECT],
    ['android-app://com.google.android.gm/', 'example.com', DIRECT],
    ['data:text/html,hi', 'example.com', DIRECT],
    ['file:///etc/passwd', 'example.com', DIRECT],
    ['javascript:alert(1)', 'example.com', DIRECT],
    // same site
    ['https://example.com/a', 'example.com', DIRECT],
    ['https://www.example.com/a', 'example.com', DIRECT],
    ['https://example.com/a', 'www.example.com', DIRECT],
    ['https://blog.example.com/post', 'example.com', DIRECT],
    ['https://a.b.example.com/', 'example.com', DIRECT],
    ['https://EXAMPLE.com/', 'Example.COM', DIRECT],
    ['http://localhost:3000/x', 'localhost:3000', DIRECT],
    // look-alikes are other sites
    ['https://notexample.com/', 'example.com', 'notexample.com'],
    ['https://example.com.evil.io/', 'example.com', 'example.com.evil.io'],
    ['https://example.co/', 'example.com', 'example.co'],
  ])('%j on %s → %s', (referrer, host, want) => {
    expect(referrerSource(referrer, host)).toBe(want);
  });

  it('uses utm_source only when there is no external referrer', () => {
    expect(referrerSource(undefined, 'example.com', 'Newsletter')).toBe('newsletter');
    expect(referrerSource('', 'example.com', '  mastodon ')).toBe('mastodon');
    expect(referrerSource('https://blog.example.com/', 'example.com', 'newsletter')).toBe('newsletter');
    expect(referrerSource('https://www.reddit.com/r/x', 'example.com', 'newsletter')).toBe('reddit.com');
    expect(referrerSource(undefined, 'example.com', '   ')).toBe(DIRECT);
    expect(referrerSource(undefined, 'example.com', '')).toBe(DIRECT);
  });
});

describe('parseUtm', () => {
  it('reads the five parameters, trimmed, empty when absent', () => {
    const url = new URL('https://example.com/p?utm_source=%20Newsletter%20&utm_medium=email&utm_campaign=spring+sale&other=1');
    expect(parseUtm(url)).toEqual({
      utm_source: 'Newsletter',
      utm_medium: 'email',
      utm_campaign: 'spring sale',
      utm_term: '',
      utm_content: '',
    });
  });

  it('answers all empty for a URL without UTM parameters', () => {
    expect(parseUtm(new URL('https://example.com/'))).toEqual({
      utm_source: '',
      utm_medium: '',
      utm_campaign: '',
      utm_term: '',
      utm_content: '',
    });
  });

  it('caps each value at 200 characters and takes the first of repeated parameters', () => {
    const long = 'x'.repeat(500);
    const utm = parseUtm(new URL(`https://example.com/?utm_term=${long}&utm_content=a&utm_content=b`));
    expect(utm.utm_term).toBe('x'.repeat(200));
    expect(utm.utm_content).toBe('a');
  });
});
