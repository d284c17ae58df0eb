import * as v from 'valibot';
import { definePlannedReport } from '../planned.js';
import { reportQuery } from '../params.js';
import { queryOne, sourceParams } from '../query.js';
import { num, PeriodEntries, periodFields, resolveFor } from '../shape.js';
import { avgVisitSeconds, STATS_SQL } from '../sql/stats.js';

/** Answer of `stats`. */
export const StatsResponse = v.object({
  ...PeriodEntries,
  pageviews: num('Total pageview events'),
  visitors: num('Unique visitors'),
  sessions: num('Unique browser sessions'),
  avgDurationSeconds: v.pipe(v.nullable(v.number()), v.description('Average visit duration in seconds: the summed leave durations of each session, averaged over the sessions with at least one leave event; null without leave events')),
});
type Stats = v.InferOutput<typeof StatsResponse>;

/** GET /:domain/stats — headline numbers of the period. */
export const statsReport = definePlannedReport({
  name: 'stats',
  path: '/:domain/stats',
  summary: 'Headline numbers: pageviews, visitors, sessions, average visit duration',
  query: reportQuery(),
  response: StatsResponse,
  async compute(ctx, input, source): Promise<Stats> {
    const period = resolveFor(ctx, input.period);
    const row = await queryOne(ctx.deps, STATS_SQL[source], await sourceParams(ctx.deps, ctx.project.id, period, source), {
      pageviews: 'number',
      visitors: 'number',
      sessions: 'number',
      duration_total: 'number',
      leave_sessions: 'number',
    });
    return {
      ...periodFields(period),
      pageviews: row.pageviews,
      visitors: row.visitors,
      sessions: row.sessions,
      avgDurationSeconds: avgVisitSeconds(row),
    };
  },
  csv: {
    title: 'overview',
    columns: [
      { header: 'metric', value: (r: { metric: string; value: number | null }) => r.metric },
      { header: 'value', value: (r) => r.value },
    ],
    rows: (s: Stats) => [
      { metric: 'visitors', value: s.visitors },
      { metric: 'pageviews', value: s.pageviews },
      { metric: 'sessions', value: s.sessions },
      { metric: 'avg_duration_seconds', value: s.avgDurationSeconds },
    ],
  },
});
