import { byTechDimension } from './tech.js';
import { PART_DAYS, PART_TABLES, RANKED_BY, type PartFamily, type ValuePartFamily } from './window.js';

/** Each family's daily columns after `project_id, bucket`: the values a part keeps a row per, then how each measure merges. */
const COLUMNS: Readonly<Record<ValuePartFamily, { keys: readonly string[]; sums: readonly string[]; states: readonly string[] }>> = {
  pages: { keys: ['path'], sums: ['pageviews'], states: ['visitors'] },
  countries: { keys: ['country_code', 'country_name'], sums: ['pageviews'], states: ['visitors'] },
  cities: { keys: ['country_code', 'country_name', 'city'], sums: ['pageviews'], states: ['visitors'] },
  custom_events: { keys: ['event_name', 'kind', 'currency'], sums: ['events', 'amount_cents'], states: ['people'] },
};

const partEnd = (marker: 0 | 1) => ['{partKey:String} AS stored_key', `${marker} AS is_marker`];

/** A value family's part: its daily rows merged into one row per value (COLUMNS), then the marker. */
function valuePartFill(family: ValuePartFamily): string {
  const { keys, sums, states } = COLUMNS[family];
  const columns = ['project_id', 'bucket', ...keys, ...sums, ...states, 'part_key', 'marker'];
  const start = ['project_id', "{dayFrom:DateTime('UTC')} AS first_day"];
  const merged = [...keys, ...sums.map((c) => `sum(${c}) AS ${c}_total`), ...states.map((c) => `uniqCombinedMergeState(14)(${c}) AS ${c}_merged`), ...partEnd(0)];
  const none = [
    ...keys.map((c) => `anyIf(${c}, 0) AS ${c}_none`),
    ...sums.map((c) => `sumIf(${c}, 0) AS ${c}_none`),
    ...states.map((c) => `uniqCombinedMergeStateIf(14)(${c}, 0) AS ${c}_none`),
    ...partEnd(1),
  ];
  return `
INSERT INTO ${PART_TABLES[family]} (${columns.join(', ')})
SELECT ${[...start, ...merged].join(', ')}
FROM ${family}_1d
WHERE ${PART_DAYS}
GROUP BY ${['project_id', ...keys].join(', ')}
UNION ALL
SELECT {projectId:String} AS project_id, {dayFrom:DateTime('UTC')} AS first_day, ${none.join(', ')}
FROM ${family}_1d
WHERE 0`;
}

/** The tech lists' part (migration 0029): the daily rows merged per device, per browser and per OS, as their read groups them (byTechDimension), then the marker. */
const TECH_DIMENSION_FILL = `
INSERT INTO ${PART_TABLES.tech} (project_id, bucket, dimension, name, pageviews, visitors, part_key, marker)
SELECT {projectId:String} AS project, {dayFrom:DateTime('UTC')} AS first_day, dimension, name, pageviews_total, visitors_merged, ${partEnd(0).join(', ')}
FROM (${byTechDimension(`(SELECT * FROM tech_1d WHERE ${PART_DAYS})`, 'sum(pageviews) AS pageviews_total, uniqCombinedMergeState(14)(visitors) AS visitors_merged')})
UNION ALL
SELECT {projectId:String} AS project, {dayFrom:DateTime('UTC')} AS first_day, '' AS dimension_none, '' AS name_none, sumIf(pageviews, 0) AS pageviews_none,
  uniqCombinedMergeStateIf(14)(visitors, 0) AS visitors_none, ${partEnd(1).join(', ')}
FROM tech_1d
WHERE 0`;

/**
 * Each family's INSERT storing the part `{partKey}` of its closed days [dayFrom, partTo) and its marker row in one
 * block, written once. The marker's values are the columns' defaults (aggregates of no row: `anyIf(…, 0)` keeps each
 * column's type, an Enum's too). Aliases differ from the column names: in ClickHouse an alias is seen by the WHERE,
 * and `… AS bucket` would turn the day bounds into a test of the constant.
 */
const FILLS: Readonly<Record<PartFamily, string>> = {
  pages: valuePartFill('pages'),
  countries: valuePartFill('countries'),
  cities: valuePartFill('cities'),
  tech: TECH_DIMENSION_FILL,
  custom_events: valuePartFill('custom_events'),
};

/** The INSERT that stores a family's part of closed days with its marker (FILLS). */
export const fillDayPartSql = (family: PartFamily): string => FILLS[family];

/**
 * When the part `{partKey}` of a family was stored (`n` = 0: it is not), how many values it holds, and how
 * many of what its lists rank by it counts in all (`counted`: pageviews, or events).
 */
export const dayPartStoredSql = (family: PartFamily): string => `
SELECT countIf(marker = 1) AS n, toUnixTimestamp(minIf(created, marker = 1)) AS created, countIf(marker = 0) AS value_rows,
  sumIf(${RANKED_BY[family]}, marker = 0) AS counted
FROM ${PART_TABLES[family]}
WHERE project_id = {projectId:String} AND part_key = {partKey:String}`;
