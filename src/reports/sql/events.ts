import type { SourcedSql } from '../planner.js';
import { periodRollupRows, preRanked, RAW_WINDOW } from './window.js';

/*
 * Custom and transaction events per name, ranked by count. `currencies` counts the distinct
 * currencies of the name's transactions so the caller can null the amount when they mix.
 * Aliases differ from column names so no aggregate reads another's alias.
 */

/** The raw form over the events that also satisfy `kept` (keptEventsCondition of a request's filters; '1' for all). */
export const eventsRawSql = (kept: string) => `
SELECT toString(event_name) AS name, uniqCombined(14)(visitor_id) AS people, count() AS event_count,
       countIf(kind = 'transaction') AS transaction_count,
       uniqExactIf(currency, kind = 'transaction') AS currencies,
       anyIf(toString(currency), kind = 'transaction') AS currency_code,
       sumIf(amount_cents, kind = 'transaction') AS amount_total
FROM events
WHERE ${RAW_WINDOW} AND kind IN ('custom', 'transaction')${kept === '1' ? '' : ` AND (${kept})`}
GROUP BY name
ORDER BY event_count DESC, name ASC
LIMIT {limit:UInt32}`;

export const EVENTS_SQL: SourcedSql = {
  rollup: `
SELECT toString(event_name) AS name, uniqCombinedMerge(14)(people) AS people, sum(events) AS event_count,
       sumIf(events, kind = 'transaction') AS transaction_count,
       uniqExactIf(currency, kind = 'transaction') AS currencies,
       anyIf(toString(currency), kind = 'transaction') AS currency_code,
       sumIf(amount_cents, kind = 'transaction') AS amount_total
FROM ${periodRollupRows('custom_events')}
${preRanked('event_name', 'custom_events')}
GROUP BY name
ORDER BY event_count DESC, name ASC
LIMIT {limit:UInt32}`,
  raw: eventsRawSql('1'),
};

/*
 * Counts of the named events only, unranked: the compared period's numbers for the rows an
 * answer shows (`names`), so a row is never missing for ranking lower there.
 */

/** The raw form of EVENTS_BY_NAME_SQL over the events that also satisfy `kept` ('1' for all). */
export const eventsByNameRawSql = (kept: string) => `
SELECT toString(event_name) AS name, uniqCombined(14)(visitor_id) AS people, count() AS event_count
FROM events
WHERE ${RAW_WINDOW} AND kind IN ('custom', 'transaction') AND event_name IN {names:Array(String)}${kept === '1' ? '' : ` AND (${kept})`}
GROUP BY name`;

export const EVENTS_BY_NAME_SQL: SourcedSql = {
  rollup: `
SELECT toString(event_name) AS name, uniqCombinedMerge(14)(people) AS people, sum(events) AS event_count
FROM ${periodRollupRows('custom_events')}
WHERE event_name IN {names:Array(String)}
GROUP BY name`,
  raw: eventsByNameRawSql('1'),
};
