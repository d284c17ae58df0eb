import * as v from 'valibot';
import type { ReportContext } from '../definition.js';
import { defineReport } from '../definition.js';
import { ranged, rangeOnlyEntries, resolveInput } from '../analysis-input.js';
import { filtersOf, FiltersQuery, keptEvents } from '../filter-input.js';
import { limitParam } from '../params.js';
import { queryRows, rawParams, type QueryParams } from '../query.js';
import { toClickHouseDateTime64 } from '../../adapters/clickhouse-time.js';
import type { ResolvedPeriod } from '../periods.js';
import { num, PeriodEntries, periodFields, str } from '../shape.js';
import { visitorSliceKey } from '../visitor-slices.js';
import {
  filteredLatestVisitorIdsSql,
  filteredVisitorsByIdSql,
  LATEST_VISITOR_IDS_SQL,
  LATEST_VISITORS_OF_SLICE_SQL,
  ONE_VISITOR_SQL,
  VISITORS_BY_ID_SQL,
} from '../sql/visitors.js';

const VISITOR_SPEC = {
  visitor: 'string',
  first_ms: 'number',
  last_ms: 'number',
  pageview_count: 'number',
  session_count: 'number',
  event_count: 'number',
  duration_total: 'number',
  last_country: 'string',
  last_country_code: 'string',
  last_city: 'string',
  last_device: 'string',
  last_browser: 'string',
  last_os: 'string',
  last_path: 'string',
  first_referrer: 'string',
} as const;

const orNull = (s: string) => (s === '' ? null : s);
/** Epoch ms as ISO 8601 (UTC). */
export const iso = (ms: number) => new Date(ms).toISOString();
/** A described nullable string field for response schemas. */
export const nullableStr = (description: string) => v.pipe(v.nullable(v.string()), v.description(description));

/** Fields of a visitor, in the list and (with more) in the profile. */
export const VisitorEntries = {
  visitorId: str('Visitor id (unsigned 64-bit, decimal)'),
  firstSeen: str('First event in the period (ISO 8601, UTC)'),
  lastSeen: str('Last event in the period (ISO 8601, UTC)'),
  pageviews: num('Pageviews in the period'),
  sessions: num('Sessions in the period'),
  events: num('Custom and transaction events in the period'),
  country: nullableStr('Country name of the latest event; null when unknown'),
  country_code: nullableStr('ISO 3166-1 alpha-2 of the latest event; null when unknown'),
  city: nullableStr('City of the latest event; null when unknown'),
  device: nullableStr('Device type of the latest event'),
  browser: nullableStr('Browser of the latest event'),
  os: nullableStr('Operating system of the latest event'),
  lastPath: nullableStr('Path of the latest pageview; null without pageviews'),
  referrer: nullableStr('Referrer source of the first pageview (`(direct)` when none); null without pageviews'),
};
const Visitor = v.object(VisitorEntries);
type VisitorItem = v.InferOutput<typeof Visitor>;
type VisitorRow = { [K in keyof typeof VISITOR_SPEC]: (typeof VISITOR_SPEC)[K] extends 'number' ? number : string };

function visitorItem(r: VisitorRow): VisitorItem {
  const hasPageview = r.pageview_count > 0;
  return {
    visitorId: r.visitor,
    firstSeen: iso(r.first_ms),
    lastSeen: iso(r.last_ms),
    pageviews: r.pageview_count,
    sessions: r.session_count,
    events: r.event_count,
    country: orNull(r.last_country),
    country_code: orNull(r.last_country_code),
    city: orNull(r.last_city),
    device: orNull(r.last_device),
    browser: orNull(r.last_browser),
    os: orNull(r.last_os),
    lastPath: hasPageview ? r.last_path : null,
    referrer: hasPageview ? r.first_referrer : null,
  };
}

/** One visitor's summary over the period, or null when the visitor has no event in it. */
export async function findVisitor(ctx: ReportContext, params: QueryParams): Promise<(VisitorItem & { durationMs: number }) | null> {
  const [row] = await queryRows(ctx.deps, ONE_VISITOR_SQL, params, VISITOR_SPEC);
  return row ? { ...visitorItem(row), durationMs: row.duration_total } : null;
}

const HOUR_MS = 3_600_000;
/** How far back from the period's end the id search looks, narrowest first, widening until enough turn up. */
const SLICE_SPANS_MS = [HOUR_MS, 24 * HOUR_MS, 7 * 24 * HOUR_MS];
/**
 * The widest slice read in one statement with the summaries (the last day), and the one a list
 * looks at first until an answer of this process showed a narrower one would have held it
 * (VisitorSlices): a quiet site then pays no statement for a slice that holds too few.
 */
const LAST_DAY = 1;
/**
 * The start of a slice reaching back `span` from `end`, moved back to a whole UTC hour: the same
 * statement for an hour, so a list asked again (or by dashboards opened together) is the same
 * read (README "Hash table sizes"), at the cost of at most an hour more to search.
 */
const sliceStart = (end: number, span: number) => Math.floor((end - span) / HOUR_MS) * HOUR_MS;

/**
 * The `limit` latest visitor ids of the period, lastSeen descending then id ascending, reading
 * recent slices first (`starts`, narrowest first). Exact: a visitor with any event in
 * [sliceFrom, to) has its period lastSeen in the slice, and every visitor without one was last
 * seen strictly before sliceFrom, so when the slice yields `limit` visitors they outrank everyone
 * outside it (no tie can cross the boundary). With fewer, the next wider slice (finally the whole
 * period) is read.
 */
async function latestVisitorIds(ctx: ReportContext, period: ResolvedPeriod, params: QueryParams, limit: number, starts: readonly number[]): Promise<string[]> {
  const idsSince = async (start: number) =>
    (await queryRows(ctx.deps, LATEST_VISITOR_IDS_SQL, { ...params, sliceFrom: toClickHouseDateTime64(start), limit }, { visitor: 'string' })).map((r) => r.visitor);
  for (const start of starts) {
    const ids = await idsSince(start);
    if (ids.length >= limit) return ids;
  }
  return idsSince(period.from);
}

/**
 * The `limit` latest visitors of the period with their summaries. The slices up to the last day
 * are read in one statement each (LATEST_VISITORS_OF_SLICE_SQL), from the narrowest that held the
 * project's list last time (the last day at first), which on a site with traffic is the answer;
 * otherwise the wider slices are searched for ids, then their summaries read. The narrowest slice
 * that would have held the answer (by its oldest visitor) is remembered for the next ask.
 */
async function latestVisitors(ctx: ReportContext, period: ResolvedPeriod, params: QueryParams, limit: number): Promise<VisitorRow[]> {
  const starts = SLICE_SPANS_MS.map((span) => sliceStart(period.to, span));
  const slices = ctx.deps.visitorSlices;
  const key = visitorSliceKey(ctx.project.id, limit);
  const remembered = (rows: VisitorRow[]) => {
    const oldest = rows.length >= limit ? rows[limit - 1]!.last_ms : -Infinity;
    const narrowest = starts.findIndex((start) => start <= oldest);
    if (narrowest >= 0 && narrowest <= LAST_DAY) slices?.set(key, narrowest);
    else slices?.delete(key);
    return rows;
  };
  for (let slice = slices?.get(key) ?? LAST_DAY; slice <= LAST_DAY && starts[slice]! > period.from; slice++) {
    const rows = await queryRows(ctx.deps, LATEST_VISITORS_OF_SLICE_SQL, { ...params, sliceFrom: toClickHouseDateTime64(starts[slice]!), limit }, VISITOR_SPEC);
    if (rows.length >= limit) return remembered(rows);
  }
  const ids = await latestVisitorIds(ctx, period, params, limit, starts.slice(LAST_DAY + 1).filter((start) => start > period.from));
  return remembered(ids.length ? await queryRows(ctx.deps, VISITORS_BY_ID_SQL, { ...params, ids }, VISITOR_SPEC) : []);
}

export const VisitorsResponse = v.object({ ...PeriodEntries, data: v.array(Visitor) });
type Visitors = v.InferOutput<typeof VisitorsResponse>;

/** GET /:domain/visitors — the most recently seen visitors of the period. */
export const visitorsReport = defineReport({
  name: 'visitors',
  path: '/:domain/visitors',
  summary: 'Recent visitors, last seen first',
  description:
    'Visitors with any event in the period, ordered by lastSeen descending (ties by visitor id ascending). ' +
    'Location, device, browser and OS come from the latest event; referrer from the first pageview. ' +
    'With `filters`: the visitors with a pageview, custom or transaction event the filters keep, each row computed from those kept events only ' +
    '(an event-level filter such as page==/pricing counts only those pageviews; a visit-level one keeps every event of the matching visits).',
  query: ranged(v.object({ ...rangeOnlyEntries(), limit: limitParam(100, 10), ...FiltersQuery })),
  response: VisitorsResponse,
  async run(ctx, input): Promise<Visitors> {
    const { period } = await resolveInput(ctx, input);
    const params = rawParams(ctx.deps, ctx.project.id, period);
    const filters = filtersOf(input);
    if (filters.length > 0) {
      const filtered = keptEvents(filters, params);
      const ids = (await queryRows(ctx.deps, filteredLatestVisitorIdsSql(filtered.kept), { ...filtered.params, limit: input.limit }, { visitor: 'string' })).map((r) => r.visitor);
      const rows = ids.length ? await queryRows(ctx.deps, filteredVisitorsByIdSql(filtered.kept), { ...filtered.params, ids }, VISITOR_SPEC) : [];
      return { ...periodFields(period), data: rows.map(visitorItem) };
    }
    const rows = await latestVisitors(ctx, period, params, input.limit);
    return { ...periodFields(period), data: rows.map(visitorItem) };
  },
  csv: {
    title: 'visitors',
    columns: (Object.keys(VisitorEntries) as (keyof VisitorItem)[]).map((key) => ({ header: key, value: (r: VisitorItem) => r[key] })),
    rows: (r: Visitors) => r.data,
  },
});
