import { describe, expect, it } from 'vitest';
import { classifyAddress, isPublicAddress } from '../../src/net/public-address.js';
import { checkWebhookTarget } from '../../src/jobs/webhook-target.js';
import { parseConfig } from '../../src/config.js';

describe('classifyAddress', () => {
  const table: [string, string][] = [
    ['8.8.8.8', 'public'],
    ['93.184.215.14', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['[2a00:1450:4001:80b::200e]', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['::ffff:192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fc00::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['100::1', 'reserved'],
    // NAT64, 6to4 and Teredo are judged by the IPv4 address inside.
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::808:808', 'public'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:808:808::1', 'public'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // client 127.0.0.1 (inverted)
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'public'], // client 8.8.8.8 (inverted)
    ['not-an-ip', 'invalid'],
    ['1.2.3', 'invalid'],
    ['01.2.3.4', 'invalid'],
  ];
  it.each(table)('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
    expect(isPublicAddress(ip)).toBe(cls === 'public');
  });
});

describe('checkWebhookTarget without a resolver (Workers)', () => {
  const policy = { allowPrivate: false };
  it('refuses IP-literal hosts in every spelling URL parsing accepts', async () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://2130706433/x',
      'https://0x7f.1/x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00::1]:8443/',
      'https://localhost/',
      'https://api.localhost./',
    ]) {
      const target = await checkWebhookTarget(url, policy);
      expect(target.ok, url).toBe(false);
      if (!target.ok) expect(target.error, url).toMatch(/^webhookUrl must point to a public address: /);
    }
  });
  it('lets public literals and names through, names unchecked', async () => {
    expect(await checkWebhookTarget('https://8.8.8.8/hook', policy)).toMatchObject({ ok: true, address: '8.8.8.8' });
    expect(await checkWebhookTarget('https://hooks.example.com/hook', policy)).toMatchObject({ ok: true, address: null });
  });
  it('lets everything through with WEBHOOK_ALLOW_PRIVATE', async () => {
    const allowPrivate = parseConfig({ WEBHOOK_ALLOW_PRIVATE: '1' }).WEBHOOK_ALLOW_PRIVATE;
    expect(allowPrivate).toBe(true);
    expect(parseConfig({}).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(() => parseConfig({ WEBHOOK_ALLOW_PRIVATE: 'maybe' })).toThrow('WEBHOOK_ALLOW_PRIVATE must be true or false');
    expect(await checkWebhookTarget('https://127.0.0.1/x', { allowPrivate })).toMatchObject({ ok: true, address: null });
  });
  it('names the field it was given', async () => {
    expect(await checkWebhookTarget('https://10.0.0.1/', policy, 'notifications.url')).toEqual({
      ok: false,
      error: 'notifications.url must point to a public address: 10.0.0.1 is a private address',
    });
  });
});
