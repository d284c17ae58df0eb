import { countryName } from '../../ingest/enrich/countries.js';
import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { COUNTRIES_SQL } from '../sql/countries.js';

/** GET /:domain/countries — top countries by pageviews. */
export const countriesReport = defineRankedReport({
  name: 'countries',
  path: '/:domain/countries',
  summary: 'Top countries, ranked by pageviews',
  description: 'Visits whose country is unknown are not listed.',
  rollup: {
    sql: COUNTRIES_SQL,
    spec: { country: 'string', code: 'string', pageviews: 'number', visitors: 'number' },
    toItem: (r) => ({ country: r.country, country_code: r.code, pageviews: r.pageviews, visitors: r.visitors }),
  },
  question: {
    dimensions: ['country'],
    rankBy: 'pageviews',
    // The name is the one ingest stores beside the code (the same table).
    toItem: (r) => ({ country: countryName(String(r.country)), country_code: String(r.country), pageviews: Number(r.pageviews ?? 0), visitors: Number(r.visitors ?? 0) }),
    keyOfRow: (r) => String(r.country),
    keyOfItem: (i) => i.country_code,
    firstOf: (i) => i.country_code,
    nameOf: (i) => `${i.country}\u0000${i.country_code}`,
    rankHere: true,
  },
  item: {
    country: str('Country name'),
    country_code: str('ISO 3166-1 alpha-2 code'),
    pageviews: num('Pageviews'),
    visitors: num('Unique visitors'),
  },
  csv: { title: 'countries' },
});
