import { defineRankedReport } from '../ranked.js';
import type { AnswerRow } from '../../analysis/run.js';
import { num, str } from '../shape.js';
import { DIRECT_FOLD, visitsBySource } from '../visits-by-source.js';

const toItem = (r: AnswerRow) => ({ referrer: String(r.source), pageviews: Number(r.pageviews ?? 0), visitors: Number(r.visitors ?? 0) });

/**
 * GET /:domain/referrers — top sources by pageviews, per visit: every pageview of a visit and
 * its visitor count for the source of the visit's first event, so a visit that came from a
 * search engine and went on through the site's own links (stored as `(direct)` on the later
 * pageviews) counts all its pageviews for the search engine. From raw events grouped by visit (the
 * per-pageview referrer rollup cannot tell visits apart), the closed hours' visits summed once an
 * hour where the period has them (src/analysis/closed-hours.ts).
 */
export const referrersReport = defineRankedReport({
  name: 'referrers',
  path: '/:domain/referrers',
  summary: 'Top referrers, ranked by pageviews',
  description:
    "The referrer is the referring host of the visit (its first event's); traffic without a (foreign) referrer is `(direct)`. " +
    "A visit's pageviews and visitor count all go to its referrer, including pageviews reached through the site's own links.",
  question: {
    dimensions: ['source'],
    rankBy: 'pageviews',
    toItem,
    keyOfRow: (r) => String(r.source),
    keyOfItem: (i) => i.referrer,
    firstOf: (i) => i.referrer,
    nameOf: (i) => i.referrer,
    fold: DIRECT_FOLD,
  },
  // Unfiltered: from the period's visits by source, a pass shared with stats.
  unfiltered: async (ctx, input, period) => (await visitsBySource(ctx, period, input)).map(toItem),
  item: { referrer: str('Referring host, or (direct)'), pageviews: num('Pageviews'), visitors: num('Unique visitors') },
  csv: { title: 'referrers' },
});
