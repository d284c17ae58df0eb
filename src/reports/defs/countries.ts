import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { COUNTRIES_SQL } from '../sql/countries.js';

/** GET /:domain/countries — top countries by pageviews. */
export const countriesReport = defineRankedReport({
  name: 'countries',
  path: '/:domain/countries',
  summary: 'Top countries, ranked by pageviews',
  description: 'Visits whose country is unknown are not listed.',
  sql: COUNTRIES_SQL,
  spec: { country: 'string', code: 'string', pageviews: 'number', visitors: 'number' },
  item: {
    country: str('Country name'),
    country_code: str('ISO 3166-1 alpha-2 code'),
    pageviews: num('Pageviews'),
    visitors: num('Unique visitors'),
  },
  toItem: (r) => ({ country: r.country, country_code: r.code, pageviews: r.pageviews, visitors: r.visitors }),
  csv: { title: 'countries' },
});
