import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { REFERRERS_SQL } from '../sql/referrers.js';

/** GET /:domain/referrers — top referring sources by pageviews, `(direct)` for none. */
export const referrersReport = defineRankedReport({
  name: 'referrers',
  path: '/:domain/referrers',
  summary: 'Top referrers, ranked by pageviews',
  description: 'The referrer is the referring host; traffic without a (foreign) referrer is `(direct)`.',
  sql: REFERRERS_SQL,
  spec: { referrer: 'string', pageviews: 'number', visitors: 'number' },
  item: { referrer: str('Referring host, or (direct)'), pageviews: num('Pageviews'), visitors: num('Unique visitors') },
  toItem: (r) => r,
  csv: { title: 'referrers' },
});
