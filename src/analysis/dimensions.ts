import type { Binder } from './binder.js';
import { channelSql } from './channels.js';
import { EVENT_DIMENSIONS, TIME_DIMENSIONS, VISIT_DIMENSIONS, type Dimension, type FilterDimension, type VisitDimension } from './question.js';

/** Event kinds a question counts: the others (leave, vitals) only lend visits their duration. */
export const COUNTED_KINDS = "kind IN ('pageview', 'custom', 'transaction')";

/**
 * Per visit attribute: the aggregate over the visit's events (grouped by session_id) that gives
 * it. Attributes come from the visit's first counted event, the entry page from its first
 * pageview, the exit page from its last; channel is derived from source and UTM values.
 * Closed table: a dimension name reaches SQL only through it.
 */
interface VisitAttribute {
  /** The events column the attribute is taken from. */
  column: string;
  /** The events it may come from. */
  kinds: string;
  /** argMinIf: the first such event's value; argMaxIf: the last one's. */
  pick: 'argMinIf' | 'argMaxIf';
}
const FIRST = (column: string): VisitAttribute => ({ column, kinds: COUNTED_KINDS, pick: 'argMinIf' });
const VISIT_ATTRIBUTES: Readonly<Record<Exclude<VisitDimension, 'channel'>, VisitAttribute>> = {
  source: FIRST('referrer_source'),
  utmSource: FIRST('utm_source'),
  utmMedium: FIRST('utm_medium'),
  utmCampaign: FIRST('utm_campaign'),
  utmTerm: FIRST('utm_term'),
  utmContent: FIRST('utm_content'),
  entryPage: { column: 'path', kinds: "kind = 'pageview'", pick: 'argMinIf' },
  exitPage: { column: 'path', kinds: "kind = 'pageview'", pick: 'argMaxIf' },
  country: FIRST('country_code'),
  region: FIRST('region'),
  city: FIRST('city'),
  browser: FIRST('browser'),
  os: FIRST('os'),
  device: FIRST('device'),
};

/**
 * Where a visit attribute comes from on a single event: the events its value may be taken from
 * and the column holding it there. A visit whose attribute meets a condition holds such an event
 * meeting it, unless the attribute is empty for want of one. Null for channel (derived, not read).
 */
export function visitAttributeSource(d: VisitDimension): { kinds: string; column: string } | null {
  if (d === 'channel') return null;
  // The column as stored, not toString of it: a condition on a LowCardinality column runs over its dictionary.
  const { kinds, column } = VISIT_ATTRIBUTES[d];
  return { kinds, column };
}

/** The column a visit attribute has in the visits subquery. */
export const visitColumn = (d: VisitDimension) => `v_${d}`;

/**
 * `argMin…(…) AS v_source, …` for the visits subquery: every attribute in `needed` (channel
 * brings its inputs; its own column comes from visitChannelColumn, one level up).
 */
export function visitAttributeColumns(needed: ReadonlySet<VisitDimension>): string[] {
  const names = new Set<Exclude<VisitDimension, 'channel'>>();
  for (const d of needed) {
    if (d === 'channel') ['source', 'utmSource', 'utmMedium', 'utmCampaign'].forEach((n) => names.add(n as never));
    else names.add(d);
  }
  return [...names].map((n) => {
    const { pick, column, kinds } = VISIT_ATTRIBUTES[n];
    return `toString(${pick}(${column}, ts, ${kinds})) AS ${visitColumn(n)}`;
  });
}

/**
 * `<rules> AS v_channel` over the columns of visitAttributeColumns, or null when channel is not
 * needed. It must be selected over the grouped visits, not beside their aggregates: in the same
 * SELECT the embedded engine's analyzer fails on the rule expression ("argMinIf is not resolved
 * as ordinary function").
 */
export function visitChannelColumn(needed: ReadonlySet<VisitDimension>): string | null {
  if (!needed.has('channel')) return null;
  return `${channelSql(visitColumn('source'), visitColumn('utmSource'), visitColumn('utmMedium'), visitColumn('utmCampaign'))} AS ${visitColumn('channel')}`;
}

export const isVisitDimension = (d: string): d is VisitDimension => (VISIT_DIMENSIONS as readonly string[]).includes(d);
export const isTimeDimension = (d: string): d is (typeof TIME_DIMENSIONS)[number] => (TIME_DIMENSIONS as readonly string[]).includes(d);

/** Longest custom property key a dimension may name. */
export const PROP_KEY_MAX = 300;

/** Whether `name` is a dimension filters may name (the `prop:` key must be non-empty). */
export function isFilterDimension(name: string): name is FilterDimension {
  if (name.startsWith('prop:')) return name.length > 5 && name.length <= 5 + PROP_KEY_MAX;
  return (EVENT_DIMENSIONS as readonly string[]).includes(name) || isVisitDimension(name);
}

/** Whether `name` is a dimension a question may group by. */
export const isDimension = (name: string): name is Dimension => isFilterDimension(name) || isTimeDimension(name);

/** Every dimension name, for messages (`prop:<key>` stands for all custom properties). */
export const DIMENSION_NAMES: readonly string[] = [...EVENT_DIMENSIONS, 'prop:<key>', ...VISIT_DIMENSIONS];

/**
 * SQL for an event-level dimension over an `events` row. The property key is bound, never
 * written into the text.
 */
export function eventDimensionSql(d: Exclude<FilterDimension, VisitDimension>, binder: Binder): string {
  if (d.startsWith('prop:')) return `props[${binder.bind(d.slice(5), 'String')}]`;
  switch (d) {
    case 'page':
      return 'path';
    case 'hostname':
      return 'toString(hostname)';
    case 'event':
      return 'toString(event_name)';
  }
  throw new Error(`not an event dimension: ${d}`);
}
