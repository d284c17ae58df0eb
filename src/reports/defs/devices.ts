import * as v from 'valibot';
import { definePlannedReport } from '../planned.js';
import { filtersOf, FiltersQuery, keptEvents, withFilteredSource } from '../filter-input.js';
import { generalPeriod } from '../params.js';
import { queryRows, sourceParams } from '../query.js';
import { byMetricThenName, num, PeriodEntries, periodFields, resolveFor, str } from '../shape.js';
import { DEVICES_SQL, devicesRawSql } from '../sql/tech.js';

const NameVisitors = v.object({ name: str('Name (Unknown when not recognized)'), visitors: num('Unique visitors') });
type Item = v.InferOutput<typeof NameVisitors>;
/** Answer of `devices`: three full lists, each ranked by visitors then name. */
export const DevicesResponse = v.object({
  ...PeriodEntries,
  devices: v.pipe(v.array(NameVisitors), v.description('Device types: Mobile, Desktop, Tablet, Unknown, …')),
  browsers: v.array(NameVisitors),
  os: v.array(NameVisitors),
});
type Devices = v.InferOutput<typeof DevicesResponse>;

const rank = byMetricThenName<Item>((i) => i.visitors, (i) => i.name);

const planned = definePlannedReport({
  name: 'devices',
  path: '/:domain/devices',
  summary: 'Device types, browsers and operating systems by unique visitors (no limit)',
  description: 'With `filters`, visitors are counted over the pageviews the filters keep.',
  query: v.object({ period: generalPeriod(), ...FiltersQuery }),
  response: DevicesResponse,
  async compute(ctx, input, source): Promise<Devices> {
    const period = resolveFor(ctx, input.period);
    const params = await sourceParams(ctx.deps, ctx.project.id, period, source);
    // Filters only ever reach the raw form: run() sends every filtered request there.
    const filters = filtersOf(input);
    const filtered = source === 'raw' && filters.length > 0 ? keptEvents(filters, params) : null;
    const sql = filtered ? devicesRawSql(filtered.kept) : DEVICES_SQL[source];
    const rows = await queryRows(ctx.deps, sql, filtered?.params ?? params, {
      dimension: 'string',
      name: 'string',
      visitors: 'number',
    });
    const pick = (d: string) => rows.filter((r) => r.dimension === d).map(({ name, visitors }) => ({ name, visitors })).sort(rank);
    return { ...periodFields(period), devices: pick('device'), browsers: pick('browser'), os: pick('os') };
  },
  csv: {
    title: 'devices',
    columns: [
      { header: 'dimension', value: (r: Item & { dimension: string }) => r.dimension },
      { header: 'name', value: (r) => r.name },
      { header: 'visitors', value: (r) => r.visitors },
    ],
    rows: (d: Devices) => [
      ...d.devices.map((i) => ({ dimension: 'device', ...i })),
      ...d.browsers.map((i) => ({ dimension: 'browser', ...i })),
      ...d.os.map((i) => ({ dimension: 'os', ...i })),
    ],
  },
});

/** GET /:domain/devices — device types, browsers and operating systems in one answer; `filters` read raw events. */
export const devicesReport = withFilteredSource(planned);
