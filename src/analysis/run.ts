import type { Deps } from '../deps.js';
import type { ResolvedPeriod } from '../reports/periods.js';
import { answerFromParts } from './closed-hours.js';
import { queryJson, rawParams } from '../reports/query.js';
import { isTimeDimension } from './dimensions.js';
import { planQuestion, type PlanInput, type PlanMetric } from './plan.js';
import type { Dimension, Filter, OrderDirection } from './question.js';

/** A question whose range is resolved: what routes, presets and tools hand the pipeline. */
export interface Question {
  metrics: readonly PlanMetric[];
  dimensions: readonly Dimension[];
  filters: readonly Filter[];
  /** Defaults: time dimensions ascending, then the first metric descending, then the other dimensions ascending. */
  orderBy?: readonly (readonly [PlanMetric | Dimension, OrderDirection])[];
  limit?: number;
  offset?: number;
  /** Keep only rows whose first dimension is one of these. */
  onlyFirst?: readonly string[];
  /** Group these values of the first dimension (a visit dimension) as one row named `as` (PlanInput.fold). */
  fold?: { as: string; values: readonly string[] };
}

/** One answer row: each dimension's value and each metric (rates are null when undefined). */
export type AnswerRow = Record<string, string | number | null>;

/** Rows a question answers when it names no `limit`. */
export const DEFAULT_LIMIT = 10_000;

/** The order a question gets when it names none: time first, then ranked by the first metric, ties by value. */
export function defaultOrder(q: Pick<Question, 'metrics' | 'dimensions'>): [PlanMetric | Dimension, OrderDirection][] {
  const time = q.dimensions.filter(isTimeDimension);
  const rest = q.dimensions.filter((d) => !isTimeDimension(d));
  return [...time.map((d): [Dimension, OrderDirection] => [d, 'asc']), [q.metrics[0]!, 'desc'], ...rest.map((d): [Dimension, OrderDirection] => [d, 'asc'])];
}

/** A time dimension's key as the answer shows it: hour → ISO instant; day and month keys are local dates already. */
function dimensionValue(d: Dimension, key: unknown): string {
  const text = String(key ?? '');
  return d === 'time:hour' ? new Date(Number(text) * 1000).toISOString() : text;
}

const metricValue = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/**
 * Runs a question over the raw events of `projectId` in `period` and shapes its rows: dimension
 * values keyed by dimension name, metrics keyed by metric name.
 */
export async function runQuestion(
  deps: Pick<Deps, 'clickhouse' | 'latestRow' | 'clock' | 'dataVersions' | 'closedHours' | 'background'>,
  projectId: string,
  period: ResolvedPeriod,
  q: Question,
): Promise<AnswerRow[]> {
  const input: PlanInput = {
    projectId,
    period,
    metrics: q.metrics,
    dimensions: q.dimensions,
    filters: q.filters,
    orderBy: q.orderBy ?? defaultOrder(q),
    limit: q.limit ?? DEFAULT_LIMIT,
    offset: q.offset ?? 0,
    ...(q.onlyFirst ? { onlyFirst: q.onlyFirst } : {}),
    ...(q.fold ? { fold: q.fold } : {}),
    // One set for the parts and the whole pass: a miss then sends the rows-after-now check once.
    periodParams: rawParams(deps, projectId, period),
  };
  // Questions of a period with closed hours: from their stored sums where they can be (README "Visits of closed hours").
  const raw = await answerFromParts(deps, input, () => {
    const plan = planQuestion(input);
    return queryJson(deps, plan.sql, plan.params);
  });
  return raw.map((r) => {
    const row: AnswerRow = {};
    q.dimensions.forEach((d, i) => (row[d] = dimensionValue(d, r[`d${i}`])));
    for (const m of q.metrics) row[m] = metricValue(r[m]);
    return row;
  });
}
