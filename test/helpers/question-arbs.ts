import fc from 'fast-check';
import type { Dimension, Filter, FilterDimension } from '../../src/analysis/question.js';
import { VISIT_EVENT_NAMES, VISIT_HOSTS, VISIT_PATHS, VISIT_REGIONS, VISIT_SOURCES, type GenEvent } from './events-gen.js';
import { channelFor } from './reference-analysis.js';

/** Every dimension a question may group by, with the two properties visitsArb sets. */
export const GROUPABLE: readonly Dimension[] = [
  'page', 'hostname', 'event', 'prop:plan', 'prop:lang',
  'source', 'channel', 'utmSource', 'utmMedium', 'utmCampaign', 'utmTerm', 'utmContent', 'entryPage', 'exitPage',
  'country', 'region', 'city', 'browser', 'os', 'device',
  'time:hour', 'time:day', 'time:month',
];

/** `*` matches any characters in page, entryPage and exitPage; `_` and `%` are literal there. */
const PAGE_VALUES = [...VISIT_PATHS, '/nope', '/blog/*', '/a_*', '*%off', '/*', '*', '*/*/*', '/Ü*'];
/** Values filters pick from per dimension: ones the data holds, near misses, unknown ('' where a column may be empty). */
const FILTER_VALUES: Readonly<Record<string, readonly string[]>> = {
  page: PAGE_VALUES,
  entryPage: PAGE_VALUES,
  exitPage: PAGE_VALUES,
  hostname: [...VISIT_HOSTS, 'www', 'shop.'],
  event: [...VISIT_EVENT_NAMES, 'purchase', 'click'],
  'prop:plan': ['pro', 'Free', 'free', 'r', ''],
  'prop:lang': ['de', 'en', 'EN', ''],
  source: [...VISIT_SOURCES, 'direct', '.com'],
  channel: ['Direct', 'Organic Search', 'Paid Search', 'Organic Social', 'Email', 'Referral', 'organic', 'paid'],
  utmSource: ['google', 'newsletter', 'facebook', 'OO', ''],
  utmMedium: ['cpc', 'email', 'social', 'e', ''],
  utmCampaign: ['spring', 'Spring', 'launch', ''],
  utmTerm: ['shoes', 'sho', ''],
  utmContent: ['ad1', 'top', ''],
  country: ['US', 'DE', 'IN', 'NP', 'us', ''],
  region: VISIT_REGIONS,
  city: ['New York', 'Berlin', 'Mumbai', 'york', ''],
  browser: ['Chrome', 'Firefox', 'Safari', 'chrome', ''],
  os: ['Windows', 'macOS', 'iOS', 'Android', 'os', ''],
  device: ['Desktop', 'Mobile', 'Tablet', 'Unknown', ''],
};
export const FILTERABLE = Object.keys(FILTER_VALUES) as FilterDimension[];

/** What an event holds in a filterable dimension (a visit dimension: that event's own attribute, which may be the visit's). */
function observed(d: FilterDimension, e: GenEvent): string {
  if (d.startsWith('prop:')) return e.props?.[d.slice(5)] ?? '';
  const read: Record<string, string | undefined> = {
    page: e.path, entryPage: e.path, exitPage: e.path, hostname: e.hostname, event: e.eventName, source: e.referrerSource,
    utmSource: e.utmSource, utmMedium: e.utmMedium, utmCampaign: e.utmCampaign, utmTerm: e.utmTerm, utmContent: e.utmContent,
    country: e.countryCode, region: e.region, city: e.city, browser: e.browser, os: e.os, device: e.device,
    channel: channelFor(e.referrerSource, e.utmSource ?? '', e.utmMedium ?? ''),
  };
  return read[d] ?? '';
}

/**
 * A filter on `dimensions` (default: every filterable one) over values the data mostly holds (so
 * it keeps something), sometimes on near misses from FILTER_VALUES.
 */
export const filterArb = (events: readonly GenEvent[], dimensions: readonly FilterDimension[] = FILTERABLE): fc.Arbitrary<Filter> =>
  fc
    .record({ dimension: fc.constantFrom(...dimensions), op: fc.constantFrom<Filter['op']>('is', 'is', 'is_not', 'is_not', 'contains'), upper: fc.boolean() })
    .chain(({ dimension, op, upper }) => {
      const held = [...new Set(events.map((e) => observed(dimension, e)))];
      // contains needs text: no empty needle, no pattern; its values are sometimes upper-cased (case-insensitive).
      const pool = [...FILTER_VALUES[dimension]!, ...held, ...held, ...held].filter((x) => op !== 'contains' || (x !== '' && !x.includes('*')));
      return fc
        .uniqueArray(fc.constantFrom(...(pool.length ? pool : ['x'])), { minLength: 1, maxLength: 2 })
        .map((values): Filter => ({ dimension, op, values: op === 'contains' && upper ? values.map((x) => x.toUpperCase()) : values }));
    });
