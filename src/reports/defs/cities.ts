import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { CITIES_SQL } from '../sql/cities.js';

/** GET /:domain/cities — cities with known geo, ranked by unique visitors. */
export const citiesReport = defineRankedReport({
  name: 'cities',
  path: '/:domain/cities',
  summary: 'Top cities, ranked by unique visitors (known geo only)',
  sql: CITIES_SQL,
  spec: { city_name: 'string', country: 'string', code: 'string', visitors: 'number', pageviews: 'number' },
  item: {
    city: str('City name'),
    country: str('Country name'),
    country_code: str('ISO 3166-1 alpha-2 code'),
    visitors: num('Unique visitors'),
    pageviews: num('Pageviews'),
  },
  toItem: (r) => ({ city: r.city_name, country: r.country, country_code: r.code, visitors: r.visitors, pageviews: r.pageviews }),
  csv: { title: 'cities' },
});
