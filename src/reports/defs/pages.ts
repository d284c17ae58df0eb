import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { PAGES_SQL } from '../sql/pages.js';

/** GET /:domain/pages — top paths by pageviews. */
export const pagesReport = defineRankedReport({
  name: 'pages',
  path: '/:domain/pages',
  summary: 'Top pages, ranked by pageviews',
  rollup: { sql: PAGES_SQL, spec: { path: 'string', pageviews: 'number', visitors: 'number' }, toItem: (r) => r },
  question: {
    dimensions: ['page'],
    rankBy: 'pageviews',
    toItem: (r) => ({ path: String(r.page), pageviews: Number(r.pageviews ?? 0), visitors: Number(r.visitors ?? 0) }),
    keyOfRow: (r) => String(r.page),
    keyOfItem: (i) => i.path,
    firstOf: (i) => i.path,
    nameOf: (i) => i.path,
  },
  item: { path: str('Page path'), pageviews: num('Pageviews'), visitors: num('Unique visitors') },
  csv: { title: 'pages' },
});
