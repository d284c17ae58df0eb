import { beforeAll, describe, expect, it } from 'vitest';
import type { GeoLookup } from '../../src/ingest/geo.js';
import { defaultGeoDatabasePath, openMaxmindGeo } from '../../src/ingest/enrich/geo-maxmind.js';

/** The real bundled DB-IP City Lite database (pinned package version, so answers are stable). */
let geo: GeoLookup;

beforeAll(async () => {
  const path = defaultGeoDatabasePath();
  expect(path).toMatch(/dbip-city-ipv4\.mmdb$/);
  geo = await openMaxmindGeo(path!);
});

describe('MaxMind-format geo lookup', () => {
  it.each([
    ['8.8.8.8', 'US'], // Google Public DNS
    ['1.1.1.1', 'AU'], // APNIC / Cloudflare, registered in Australia
    ['46.4.0.1', 'DE'], // Hetzner, Falkenstein
    ['193.99.144.80', 'DE'], // heise.de, Hannover
    ['133.11.0.1', 'JP'], // University of Tokyo
    ['210.130.0.1', 'JP'], // IIJ
    ['2a01:4f8::1', 'DE'], // Hetzner IPv6
    ['2a00:1450:4001::1', 'DE'], // Google Frankfurt IPv6
  ])('%s is in %s', (ip, country) => {
    expect(geo.lookup(ip)?.countryCode).toBe(country);
  });

  it('knows region and city where the database does, without district suffixes', () => {
    expect(geo.lookup('8.8.8.8')).toEqual({ countryCode: 'US', region: 'California', city: 'Mountain View' });
    // DB-IP stores "Hanover (Buchholz-Kleefeld)"; the report shows the city.
    expect(geo.lookup('193.99.144.80')).toEqual({ countryCode: 'DE', region: 'Lower Saxony', city: 'Hanover' });
  });

  it('looks up IPv4-mapped IPv6 (how Node reports IPv4 peers) as IPv4', () => {
    expect(geo.lookup('::ffff:8.8.8.8')).toEqual(geo.lookup('8.8.8.8'));
  });

  it.each(['10.0.0.1', '172.16.5.4', '192.168.1.1', '127.0.0.1', '169.254.10.1', '100.64.1.1', '::1', 'fe80::1', 'fd00::1', '::ffff:192.168.1.1', '2001:db8::1'])(
    'answers null for the non-public address %s',
    (ip) => {
      expect(geo.lookup(ip)).toBeNull();
    },
  );

  it.each(['', 'not-an-ip', '1.2.3', '999.1.1.1', 'gggg::1'])('answers null for unparsable %j', (ip) => {
    expect(geo.lookup(ip)).toBeNull();
  });

  it('opens a single file when given a list, answering only its address family', async () => {
    const v4only = await openMaxmindGeo([defaultGeoDatabasePath()!]);
    expect(v4only.lookup('8.8.8.8')?.countryCode).toBe('US');
    expect(v4only.lookup('2a01:4f8::1')).toBeNull();
  });
});
