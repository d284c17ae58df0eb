import * as v from 'valibot';
import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { EVENTS_SQL } from '../sql/events.js';

/** GET /:domain/events — custom and transaction events by count (default limit 20). */
export const eventsReport = defineRankedReport({
  name: 'events',
  path: '/:domain/events',
  summary: 'Custom and transaction events, ranked by count',
  description:
    '`pct` is each row\'s share of the events in the returned rows (they sum to 1). `amountCents` and `currency` are null when the name has no transactions or its transactions use several currencies.',
  defaultLimit: 20,
  sql: EVENTS_SQL,
  spec: {
    name: 'string',
    people: 'number',
    event_count: 'number',
    transaction_count: 'number',
    currencies: 'number',
    currency_code: 'string',
    amount_total: 'number',
  },
  item: {
    name: str('Event name given to track() or transaction()'),
    people: num('Unique visitors who fired it'),
    events: num('Total count (custom plus transaction)'),
    pct: num('Share of all events in the result set, 0 to 1'),
    amountCents: v.pipe(v.nullable(v.number()), v.description('Sum of transaction amounts in minor units; null when none or mixed currencies')),
    currency: v.pipe(v.nullable(v.string()), v.description('ISO 4217 code when amountCents is set')),
    transactions: num('How many of the events are transactions'),
  },
  toItem: (r) => {
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
  },
  finish: (items) => {
    const total = items.reduce((s, i) => s + i.events, 0);
    return items.map((i) => ({ ...i, pct: total > 0 ? i.events / total : 0 }));
  },
  csv: {
    title: 'events',
    columns: [
      { header: 'name', value: (r) => r.name },
      { header: 'people', value: (r) => r.people },
      { header: 'events', value: (r) => r.events },
      { header: 'pct', value: (r) => r.pct },
      { header: 'amount_cents', value: (r) => r.amountCents },
      { header: 'currency', value: (r) => r.currency },
      { header: 'transactions', value: (r) => r.transactions },
    ],
  },
});
