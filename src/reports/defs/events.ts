import * as v from 'valibot';
import type { CsvColumn } from '../definition.js';
import { filtersOf, FiltersQuery, keptEvents, withFilteredSource } from '../filter-input.js';
import { generalPeriod, limitParam } from '../params.js';
import { definePlannedReport } from '../planned.js';
import { queryRows, sourceParams } from '../query.js';
import { num, PeriodEntries, periodFields, resolveFor, str } from '../shape.js';
import { EVENTS_SQL, eventsRawSql } from '../sql/events.js';

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
const EventsResponse = v.object({ ...PeriodEntries, data: v.array(Item) });

const columns: CsvColumn<EventItem>[] = [
  { header: 'name', value: (r) => r.name },
  { header: 'people', value: (r) => r.people },
  { header: 'events', value: (r) => r.events },
  { header: 'pct', value: (r) => r.pct },
  { header: 'amount_cents', value: (r) => r.amountCents },
  { header: 'currency', value: (r) => r.currency },
  { header: 'transactions', value: (r) => r.transactions },
];

/*
 * A ranked list like defineRankedReport's (same query, answer and CSV), written out here because
 * its SQL gains the filters' condition on filtered requests.
 */
const planned = definePlannedReport({
  name: 'events',
  path: '/:domain/events',
  summary: 'Custom and transaction events, ranked by count',
  description:
    '`pct` is each row\'s share of the events in the returned rows (they sum to 1). `amountCents` and `currency` are null when the name has no transactions or its transactions use several currencies. ' +
    'With `filters`, only the custom and transaction events the filters keep are counted.',
  query: v.object({ period: generalPeriod(), limit: limitParam(100, 20), ...FiltersQuery }),
  response: EventsResponse,
  async compute(ctx, input, source) {
    const period = resolveFor(ctx, input.period);
    const params = { ...(await sourceParams(ctx.deps, ctx.project.id, period, source)), limit: input.limit };
    // Filters only ever reach the raw form: run() sends every filtered request there.
    const filters = filtersOf(input);
    const filtered = source === 'raw' && filters.length > 0 ? keptEvents(filters, params) : null;
    const rows = await queryRows(ctx.deps, filtered ? eventsRawSql(filtered.kept) : EVENTS_SQL[source], filtered?.params ?? params, SPEC);
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
    return { ...periodFields(period), data: items.map((i) => ({ ...i, pct: total > 0 ? i.events / total : 0 })) };
  },
  csv: { title: 'events', columns, rows: (r) => r.data },
});

/** GET /:domain/events — custom and transaction events by count (default limit 20); `filters` read raw events. */
export const eventsReport = withFilteredSource(planned);
