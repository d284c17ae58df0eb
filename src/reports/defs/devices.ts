import * as v from 'valibot';
import type { Filter } from '../../analysis/question.js';
import { analysisQuery, filtersOf, resolveInput, type AnalysisInput } from '../analysis-input.js';
import { sharedPart } from '../answer-cache.js';
import type { ReportContext } from '../definition.js';
import { definePlannedReport } from '../planned.js';
import { keptEvents } from '../filter-input.js';
import type { ResolvedPeriod } from '../periods.js';
import type { Source } from '../planner.js';
import { rangeBounds } from '../project-range.js';
import { queryRowsWithDayParts, sourceRead } from '../day-parts.js';
import { byMetricThenName, num, PeriodEntries, periodFields, str } from '../shape.js';
import { DEVICES_SQL, devicesRawSql } from '../sql/tech.js';

const NameVisitors = v.object({ name: str('Name (Unknown when not recognized)'), visitors: num('Unique visitors') });
type Item = v.InferOutput<typeof NameVisitors>;
const Compared = v.pipe(
  v.object({ visitors: num('Unique visitors in the compared period') }),
  v.description('The row over the compared period (with `compare`); zero when it is absent there'),
);
const Row = v.object({ ...NameVisitors.entries, comparison: v.optional(Compared) });
/** Answer of `devices`: three full lists, each ranked by visitors then name. */
export const DevicesResponse = v.object({
  ...PeriodEntries,
  comparison: v.optional(
    v.pipe(
      v.object({ from: str('Start of the compared period (ISO 8601, UTC)'), to: str('End of the compared period, the last instant counted (ISO 8601, UTC)') }),
      v.description('The compared period (with `compare`)'),
    ),
  ),
  devices: v.pipe(v.array(Row), v.description('Device types: Mobile, Desktop, Tablet, Unknown, …')),
  browsers: v.array(Row),
  os: v.array(Row),
});
type Devices = v.InferOutput<typeof DevicesResponse>;
type Lists = Pick<Devices, 'devices' | 'browsers' | 'os'>;
const LISTS = ['devices', 'browsers', 'os'] as const;

const rank = byMetricThenName<Item>((i) => i.visitors, (i) => i.name);

/**
 * The three full lists of the request's own period, each ranked by visitors then name. Unfiltered,
 * they are a part shared with the browsers and os reports (answer-cache.ts sharedPart): a
 * dashboard asks for all three at once, and one query answers them.
 */
export function techLists(ctx: ReportContext, input: AnalysisInput, period: ResolvedPeriod, source: Source): Promise<Lists> {
  const filters = filtersOf(input);
  if (filters.length) return lists(ctx, period, filters, source);
  return sharedPart(ctx, `tech-lists:${source}`, input, (deps) => lists({ ...ctx, deps }, period, [], source));
}

/** The three full lists of `period`, each ranked by visitors then name. */
async function lists(ctx: ReportContext, period: ResolvedPeriod, filters: readonly Filter[], source: Source): Promise<Lists> {
  const { deps, params } = await sourceRead(ctx.deps, ctx.project.id, period, source);
  // Filters only ever reach the raw form: run() sends every filtered request there.
  const filtered = source === 'raw' && filters.length > 0 ? keptEvents(filters, params) : null;
  const sql = filtered ? devicesRawSql(filtered.kept) : DEVICES_SQL[source];
  const rows = await queryRowsWithDayParts(deps, sql, filtered?.params ?? params, { dimension: 'string', name: 'string', visitors: 'number' });
  const pick = (d: string) => rows.filter((r) => r.dimension === d).map(({ name, visitors }) => ({ name, visitors })).sort(rank);
  return { devices: pick('device'), browsers: pick('browser'), os: pick('os') };
}

/**
 * Each row of `shown` with its visitors in `compared`. The lists have no limit, so the compared
 * period's full lists hold every shown row that has visitors there; the others get zero.
 */
function withComparison(shown: Lists, compared: Lists): Lists {
  const out = {} as Lists;
  for (const list of LISTS) {
    const before = new Map(compared[list].map((i) => [i.name, i.visitors]));
    out[list] = shown[list].map((i) => ({ ...i, comparison: { visitors: before.get(i.name) ?? 0 } }));
  }
  return out;
}

/** GET /:domain/devices — device types, browsers and operating systems in one answer; `filters` read raw events. */
export const devicesReport = definePlannedReport({
  name: 'devices',
  path: '/:domain/devices',
  summary: 'Device types, browsers and operating systems by unique visitors (no limit)',
  description:
    'With `filters`, visitors are counted over the pageviews the filters keep. With `compare`, the answer gains `comparison: {from, to}` ' +
    'and each row of every list `comparison: {visitors}` over the compared period (0 when the name has no visitor there).',
  query: analysisQuery(),
  response: DevicesResponse,
  async compute(ctx, input, source): Promise<Devices> {
    const { period, comparison: against } = await resolveInput(ctx, input);
    const filters = filtersOf(input);
    const [shown, compared] = await Promise.all([techLists(ctx, input, period, source), against ? lists(ctx, against, filters, source) : undefined]);
    if (!against || !compared) return { ...periodFields(period), ...shown };
    return { ...periodFields(period), comparison: rangeBounds(against), ...withComparison(shown, compared) };
  },
  csv: {
    title: 'devices',
    columns: [
      { header: 'dimension', value: (r: Item & { dimension: string }) => r.dimension },
      { header: 'name', value: (r) => r.name },
      { header: 'visitors', value: (r) => r.visitors },
    ],
    rows: (d: Devices) => [
      ...d.devices.map((i) => ({ dimension: 'device', ...i })),
      ...d.browsers.map((i) => ({ dimension: 'browser', ...i })),
      ...d.os.map((i) => ({ dimension: 'os', ...i })),
    ],
  },
});

