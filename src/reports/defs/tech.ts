import type { AnswerRow } from '../../analysis/run.js';
import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { BROWSERS_SQL, OS_SQL } from '../sql/tech.js';

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
const rollup = (sql: typeof BROWSERS_SQL) => ({ sql, spec: { name: 'string', visitors: 'number' } as const, toItem: (r: { name: string; visitors: number }) => r });

/** GET /:domain/browsers — browsers by unique visitors. */
export const browsersReport = defineRankedReport({
  name: 'browsers',
  path: '/:domain/browsers',
  summary: 'Top browsers, ranked by unique visitors',
  rollup: rollup(BROWSERS_SQL),
  ...nameVisitors('Browser', 'browser'),
  csv: { title: 'browsers', columns: [{ header: 'browser', value: (r) => r.name }, { header: 'visitors', value: (r) => r.visitors }] },
});

/** GET /:domain/os — operating systems by unique visitors. */
export const osReport = defineRankedReport({
  name: 'os',
  path: '/:domain/os',
  summary: 'Top operating systems, ranked by unique visitors',
  rollup: rollup(OS_SQL),
  ...nameVisitors('Operating system', 'os'),
  csv: { title: 'operating systems', columns: [{ header: 'os', value: (r) => r.name }, { header: 'visitors', value: (r) => r.visitors }] },
});
