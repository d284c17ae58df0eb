import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { PAGES_SQL } from '../sql/pages.js';

/** GET /:domain/pages — top paths by pageviews. */
export const pagesReport = defineRankedReport({
  name: 'pages',
  path: '/:domain/pages',
  summary: 'Top pages, ranked by pageviews',
  sql: PAGES_SQL,
  spec: { path: 'string', pageviews: 'number', visitors: 'number' },
  item: { path: str('Page path'), pageviews: num('Pageviews'), visitors: num('Unique visitors') },
  toItem: (r) => r,
  csv: { title: 'pages' },
});
