import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { BROWSERS_SQL, OS_SQL } from '../sql/tech.js';

const nameVisitors = (what: string) => ({
  spec: { name: 'string', visitors: 'number' } as const,
  item: { name: str(`${what} name (Unknown when not recognized)`), visitors: num('Unique visitors') },
  toItem: (r: { name: string; visitors: number }) => r,
});

/** GET /:domain/browsers — browsers by unique visitors. */
export const browsersReport = defineRankedReport({
  name: 'browsers',
  path: '/:domain/browsers',
  summary: 'Top browsers, ranked by unique visitors',
  sql: BROWSERS_SQL,
  ...nameVisitors('Browser'),
  csv: { title: 'browsers', columns: [{ header: 'browser', value: (r) => r.name }, { header: 'visitors', value: (r) => r.visitors }] },
});

/** GET /:domain/os — operating systems by unique visitors. */
export const osReport = defineRankedReport({
  name: 'os',
  path: '/:domain/os',
  summary: 'Top operating systems, ranked by unique visitors',
  sql: OS_SQL,
  ...nameVisitors('Operating system'),
  csv: { title: 'operating systems', columns: [{ header: 'os', value: (r) => r.name }, { header: 'visitors', value: (r) => r.visitors }] },
});
