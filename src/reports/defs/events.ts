import * as v from 'valibot';
import type { Filter } from '../../analysis/question.js';
import { filtersOf, rankedQuery, resolveInput } from '../analysis-input.js';
import type { CsvColumn, ReportContext } from '../definition.js';
import { keptEvents } from '../filter-input.js';
import type { ResolvedPeriod } from '../periods.js';
import { definePlannedReport } from '../planned.js';
import type { Source } from '../planner.js';
import { rangeBounds } from '../project-range.js';
import { queryRowsWithDayParts, sourceRead } from '../day-parts.js';
import { num, PeriodEntries, periodFields, str } from '../shape.js';
import { EVENTS_BY_NAME_SQL, EVENTS_SQL, eventsByNameRawSql, eventsRawSql } from '../sql/events.js';

const SPEC = {
  name: 'string',
  people: 'number',
  event_count: 'number',
  transaction_count: 'number',
  currencies: 'number',
  currency_code: 'string',
  amount_total: 'number',
} as const;

const Item = v.object({
  name: str('Event name given to track() or transaction()'),
  people: num('Unique visitors who fired it'),
  events: num('Total count (custom plus transaction)'),
  pct: num('Share of all events in the result set, 0 to 1'),
  amountCents: v.pipe(v.nullable(v.number()), v.description('Sum of transaction amounts in minor units; null when none or mixed currencies')),
  currency: v.pipe(v.nullable(v.string()), v.description('ISO 4217 code when amountCents is set')),
  transactions: num('How many of the events are transactions'),
});
type EventItem = v.InferOutput<typeof Item>;
/** A row's counts over the compared period: zeros when the name has no event there. */
const Comparison = v.pipe(
  v.object({ events: num('Events (custom plus transaction) in the compared period'), people: num('Unique visitors who fired it in the compared period') }),
  v.description('The row over the compared period (with `compare`); zeros when it is absent there'),
);
type ComparisonCounts = v.InferOutput<typeof Comparison>;
const EventsResponse = v.object({
  ...PeriodEntries,
  comparison: v.optional(
    v.pipe(
      v.object({ from: str('Start of the compared period (ISO 8601, UTC)'), to: str('End of the compared period, the last instant counted (ISO 8601, UTC)') }),
      v.description('The compared period (with `compare`)'),
    ),
  ),
  data: v.array(v.object({ ...Item.entries, comparison: v.optional(Comparison) })),
});
type Events = v.InferOutput<typeof EventsResponse>;

const columns: CsvColumn<EventItem>[] = [
  { header: 'name', value: (r) => r.name },
  { header: 'people', value: (r) => r.people },
  { header: 'events', value: (r) => r.events },
  { header: 'pct', value: (r) => r.pct },
  { header: 'amount_cents', value: (r) => r.amountCents },
  { header: 'currency', value: (r) => r.currency },
  { header: 'transactions', value: (r) => r.transactions },
];

/** The deps, sql and params of one request: the filters' condition joins the raw form (run() sends every filtered request there). */
async function sqlFor(ctx: ReportContext, period: ResolvedPeriod, filters: readonly Filter[], source: Source, sql: { sourced: Readonly<Record<Source, string>>; raw: (kept: string) => string }) {
  const { deps, params } = await sourceRead(ctx.deps, ctx.project.id, period, source);
  const filtered = source === 'raw' && filters.length > 0 ? keptEvents(filters, params) : null;
  return filtered ? { deps, sql: sql.raw(filtered.kept), params: filtered.params } : { deps, sql: sql.sourced[source], params };
}

/** The top `limit` names of `period`, `pct` over the returned rows. */
async function eventItems(ctx: ReportContext, period: ResolvedPeriod, filters: readonly Filter[], limit: number, source: Source): Promise<EventItem[]> {
  const { deps, sql, params } = await sqlFor(ctx, period, filters, source, { sourced: EVENTS_SQL, raw: eventsRawSql });
  const rows = await queryRowsWithDayParts(deps, sql, { ...params, limit }, SPEC);
  const items = rows.map((r): EventItem => {
    const single = r.transaction_count > 0 && r.currencies === 1 && r.currency_code !== '';
    return {
      name: r.name,
      people: r.people,
      events: r.event_count,
      pct: 0,
      amountCents: single ? r.amount_total : null,
      currency: single ? r.currency_code : null,
      transactions: r.transaction_count,
    };
  });
  const total = items.reduce((s, i) => s + i.events, 0);
  return items.map((i) => ({ ...i, pct: total > 0 ? i.events / total : 0 }));
}

/** The counts of exactly the shown `names` over the compared period (one query, no limit). */
async function comparedCounts(ctx: ReportContext, against: ResolvedPeriod, filters: readonly Filter[], source: Source, names: string[]): Promise<Map<string, ComparisonCounts>> {
  if (names.length === 0) return new Map();
  const { deps, sql, params } = await sqlFor(ctx, against, filters, source, { sourced: EVENTS_BY_NAME_SQL, raw: eventsByNameRawSql });
  const rows = await queryRowsWithDayParts(deps, sql, { ...params, names }, { name: 'string', people: 'number', event_count: 'number' });
  return new Map(rows.map((r) => [r.name, { events: r.event_count, people: r.people }]));
}

/**
 * GET /:domain/events — custom and transaction events by count (default limit 20); `filters` read
 * raw events. A ranked list like defineRankedReport's (same query, answer and CSV), written out
 * because its SQL gains the filters' condition on filtered requests and its rows are events.
 */
export const eventsReport = definePlannedReport({
  name: 'events',
  path: '/:domain/events',
  summary: 'Custom and transaction events, ranked by count',
  description:
    '`pct` is each row\'s share of the events in the returned rows (they sum to 1). `amountCents` and `currency` are null when the name has no transactions or its transactions use several currencies. ' +
    'With `filters`, only the custom and transaction events the filters keep are counted. ' +
    'With `compare`, the answer gains `comparison: {from, to}` and each row `comparison: {events, people}` over the compared period (zeros when the name has no event there).',
  query: rankedQuery(100, 20),
  response: EventsResponse,
  async compute(ctx, input, source): Promise<Events> {
    const { period, comparison: against } = await resolveInput(ctx, input);
    const filters = filtersOf(input);
    const data = await eventItems(ctx, period, filters, input.limit, source);
    if (!against) return { ...periodFields(period), data };
    const counts = await comparedCounts(ctx, against, filters, source, data.map((i) => i.name));
    return {
      ...periodFields(period),
      comparison: rangeBounds(against),
      data: data.map((i) => ({ ...i, comparison: counts.get(i.name) ?? { events: 0, people: 0 } })),
    };
  },
  csv: { title: 'events', columns, rows: (r) => r.data },
});

