import { describe, expect, it } from 'vitest';
import { clientAddress, forwardedClient, parseIp, type ClientFacts } from '../../src/ingest/client-ip.js';
import { parseConfig } from '../../src/config.js';

const facts = (headers: Record<string, string>, opts: { peer?: string; onCloudflare?: boolean } = {}): ClientFacts => ({
  header: (name) => headers[name.toLowerCase()],
  onCloudflare: opts.onCloudflare ?? false,
  peerAddress: () => opts.peer ?? '198.51.100.9',
});

describe('parseIp', () => {
  it('takes IPv4 and IPv6, drops a port, unmaps IPv4-mapped IPv6, lowercases', () => {
    expect(parseIp('203.0.113.7')).toBe('203.0.113.7');
    expect(parseIp(' 203.0.113.7 ')).toBe('203.0.113.7');
    expect(parseIp('203.0.113.7:51234')).toBe('203.0.113.7');
    expect(parseIp('2001:DB8::1')).toBe('2001:db8::1');
    expect(parseIp('[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(parseIp('[2001:db8::1]')).toBe('2001:db8::1');
    expect(parseIp('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(parseIp('::1')).toBe('::1');
  });

  it('refuses anything else', () => {
    // (An unbracketed IPv6 address with a port, `2001:db8::1:443`, is itself a valid address: taken as one.)
    for (const bad of ['', 'unknown', 'example.com', '256.1.1.1', '1.2.3', '01.2.3.4', '1.2.3.4.5', '1.2.3.4:', '1.2.3.4:123456', '[1.2.3.4]', 'fe80::1%eth0',
      '2001:db8:::1', '1.2.3.4, 5.6.7.8', '*', '..', '1.2.3.4\u0000', `1.2.3.4${' '.repeat(100)}x`, '1.2.3.4:members']) {
      expect(parseIp(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});

describe('forwardedClient: the n-th X-Forwarded-For entry from the right', () => {
  const list = '6.6.6.6, 203.0.113.7, 10.0.0.2, 10.0.0.1';
  it('picks by hop count, never the forgeable leftmost while proxies are fewer than entries', () => {
    expect(forwardedClient(list, 1)).toBe('10.0.0.1');
    expect(forwardedClient(list, 2)).toBe('10.0.0.2');
    expect(forwardedClient(list, 3)).toBe('203.0.113.7');
    expect(forwardedClient(list, 4)).toBe('6.6.6.6');
  });
  it('takes the leftmost when the list is shorter than the hops (every entry is a proxy\'s)', () => {
    expect(forwardedClient('203.0.113.7, 10.0.0.1', 5)).toBe('203.0.113.7');
  });
  it('skips empty entries, says undefined without a list and null for a non-address', () => {
    expect(forwardedClient('6.6.6.6,, 203.0.113.7 ,', 1)).toBe('203.0.113.7');
    expect(forwardedClient(undefined, 1)).toBeUndefined();
    expect(forwardedClient(' , ', 1)).toBeUndefined();
    expect(forwardedClient('203.0.113.7, unknown', 1)).toBeNull();
    expect(forwardedClient('203.0.113.7:80', 1)).toBe('203.0.113.7');
  });
});

describe('clientAddress', () => {
  const xff = { 'x-forwarded-for': '6.6.6.6, 203.0.113.7' };
  it('without trusted proxies: the socket address, whatever the headers say', () => {
    expect(clientAddress(facts({ ...xff, 'x-real-ip': '1.1.1.1', 'cf-connecting-ip': '2.2.2.2' }), 0)).toBe('198.51.100.9');
    expect(clientAddress(facts({}, { peer: '::ffff:192.0.2.5' }), 0)).toBe('192.0.2.5');
    expect(clientAddress(facts({}, { peer: '' }), 0)).toBe('');
  });
  it('with n proxies: the n-th entry from the right; without the list, X-Real-IP or CF-Connecting-IP', () => {
    expect(clientAddress(facts(xff), 1)).toBe('203.0.113.7');
    expect(clientAddress(facts(xff), 2)).toBe('6.6.6.6');
    expect(clientAddress(facts({ 'x-real-ip': '192.0.2.44' }), 1)).toBe('192.0.2.44');
    expect(clientAddress(facts({ 'cf-connecting-ip': '192.0.2.45', 'x-real-ip': '192.0.2.44' }), 1)).toBe('192.0.2.45');
  });
  it('a chosen value that is not an IP address: the socket address', () => {
    expect(clientAddress(facts({ 'x-forwarded-for': '203.0.113.7, prj_x:members' }), 1)).toBe('198.51.100.9');
    expect(clientAddress(facts({ 'x-forwarded-for': '*' }), 1)).toBe('198.51.100.9');
    expect(clientAddress(facts({ 'x-real-ip': 'garbage' }), 1)).toBe('198.51.100.9');
    expect(clientAddress(facts({ 'x-forwarded-for': 'garbage' }, { peer: 'not-an-ip' }), 1)).toBe('');
  });
  it('on Cloudflare: CF-Connecting-IP always; without it, the edge\'s own X-Forwarded-For entry', () => {
    expect(clientAddress(facts({ 'cf-connecting-ip': '203.0.113.8', ...xff }, { onCloudflare: true, peer: '' }), 0)).toBe('203.0.113.8');
    expect(clientAddress(facts(xff, { onCloudflare: true, peer: '' }), 0)).toBe('203.0.113.7');
    expect(clientAddress(facts({ 'cf-connecting-ip': 'bogus' }, { onCloudflare: true, peer: '' }), 0)).toBe('');
  });
});

describe('TRUST_PROXY', () => {
  it('is a hop count; the old true/false words keep their meaning', () => {
    const hops = (value?: string) => parseConfig(value === undefined ? {} : { TRUST_PROXY: value }).TRUST_PROXY;
    expect(hops()).toBe(0);
    for (const off of ['', '0', 'false', 'no', ' FALSE ']) expect(hops(off), off).toBe(0);
    for (const one of ['1', 'true', 'yes', 'Yes ']) expect(hops(one), one).toBe(1);
    expect(hops('2')).toBe(2);
    expect(hops(' 3 ')).toBe(3);
    for (const bad of ['-1', '1.5', 'two', 'on', '100']) expect(() => hops(bad), bad).toThrow(/TRUST_PROXY must be the number of trusted proxy hops/);
  });
});
