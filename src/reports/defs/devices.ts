import * as v from 'valibot';
import { definePlannedReport } from '../planned.js';
import { reportQuery } from '../params.js';
import { queryRows, sourceParams } from '../query.js';
import { byMetricThenName, num, PeriodEntries, periodFields, resolveFor, str } from '../shape.js';
import { DEVICES_SQL } from '../sql/tech.js';

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

/** GET /:domain/devices — device types, browsers and operating systems in one answer. */
export const devicesReport = definePlannedReport({
  name: 'devices',
  path: '/:domain/devices',
  summary: 'Device types, browsers and operating systems by unique visitors (no limit)',
  query: reportQuery(),
  response: DevicesResponse,
  async compute(ctx, input, source): Promise<Devices> {
    const period = resolveFor(ctx, input.period);
    const rows = await queryRows(ctx.deps, DEVICES_SQL[source], await sourceParams(ctx.deps, ctx.project.id, period, source), {
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
