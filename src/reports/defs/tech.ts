import type { AnswerRow } from '../../analysis/run.js';
import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import type { AnalysisInput } from '../analysis-input.js';
import type { ReportContext } from '../definition.js';
import type { ResolvedPeriod } from '../periods.js';
import type { Source } from '../planner.js';
import { techLists } from './devices.js';

/** The shared parts of browsers and os: `{name, visitors}` rows, ranked by visitors, `Unknown` for none. */
const nameVisitors = (what: string, dimension: 'browser' | 'os') => ({
  item: { name: str(`${what} name (Unknown when not recognized)`), visitors: num('Unique visitors') },
  question: {
    dimensions: [dimension],
    rankBy: 'visitors' as const,
    toItem: (r: AnswerRow) => ({ name: String(r[dimension]), visitors: Number(r.visitors ?? 0) }),
    keyOfRow: (r: AnswerRow) => String(r[dimension]),
    keyOfItem: (i: { name: string }) => i.name,
    firstOf: (i: { name: string }) => i.name,
    nameOf: (i: { name: string }) => i.name,
    // An unrecognized value is stored empty; the rollup SQL names it Unknown.
    fold: { as: 'Unknown', values: ['', 'Unknown'] },
  },
});
/** The unfiltered list: the devices report's list of the same name, computed once for the three (techLists). */
const fromTechLists = (list: 'browsers' | 'os') => async (ctx: ReportContext, input: AnalysisInput, period: ResolvedPeriod, source: Source) =>
  (await techLists(ctx, input, period, source))[list];

/** GET /:domain/browsers — browsers by unique visitors. */
export const browsersReport = defineRankedReport({
  name: 'browsers',
  path: '/:domain/browsers',
  summary: 'Top browsers, ranked by unique visitors',
  unfiltered: fromTechLists('browsers'),
  ...nameVisitors('Browser', 'browser'),
  csv: { title: 'browsers', columns: [{ header: 'browser', value: (r) => r.name }, { header: 'visitors', value: (r) => r.visitors }] },
});

/** GET /:domain/os — operating systems by unique visitors. */
export const osReport = defineRankedReport({
  name: 'os',
  path: '/:domain/os',
  summary: 'Top operating systems, ranked by unique visitors',
  unfiltered: fromTechLists('os'),
  ...nameVisitors('Operating system', 'os'),
  csv: { title: 'operating systems', columns: [{ header: 'os', value: (r) => r.name }, { header: 'visitors', value: (r) => r.visitors }] },
});
