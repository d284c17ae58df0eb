import { countryName } from '../../ingest/enrich/countries.js';
import { defineRankedReport } from '../ranked.js';
import { num, str } from '../shape.js';
import { CITIES_SQL } from '../sql/cities.js';

/** GET /:domain/cities — cities with known geo, ranked by unique visitors. */
export const citiesReport = defineRankedReport({
  name: 'cities',
  path: '/:domain/cities',
  summary: 'Top cities, ranked by unique visitors (known geo only)',
  rollup: {
    sql: CITIES_SQL,
    spec: { city_name: 'string', country: 'string', code: 'string', visitors: 'number', pageviews: 'number' },
    toItem: (r) => ({ city: r.city_name, country: r.country, country_code: r.code, visitors: r.visitors, pageviews: r.pageviews }),
  },
  question: {
    // A city is a (city, country) pair, as in the rollup: Berlin, DE and Berlin, US are two rows.
    dimensions: ['city', 'country'],
    rankBy: 'visitors',
    toItem: (r) => ({
      city: String(r.city),
      country: countryName(String(r.country)),
      country_code: String(r.country),
      visitors: Number(r.visitors ?? 0),
      pageviews: Number(r.pageviews ?? 0),
    }),
    keyOfRow: (r) => `${String(r.city)}\u0000${String(r.country)}`,
    keyOfItem: (i) => `${i.city}\u0000${i.country_code}`,
    firstOf: (i) => i.city,
    nameOf: (i) => `${i.city}\u0000${i.country_code}`,
  },
  item: {
    city: str('City name'),
    country: str('Country name'),
    country_code: str('ISO 3166-1 alpha-2 code'),
    visitors: num('Unique visitors'),
    pageviews: num('Pageviews'),
  },
  csv: { title: 'cities' },
});
