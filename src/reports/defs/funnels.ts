import * as v from 'valibot';
import { ApiError } from '../../errors.js';
import { pathPatternRegex } from '../../goals/patterns.js';
import { FUNNEL_STEP_TYPES, funnelStore, GoalMessages, type Funnel, type FunnelStep } from '../../goals/store.js';
import { defineReport, type ReportContext } from '../definition.js';
import { ranged, rangeOnlyEntries, resolveInput } from '../analysis-input.js';
import { filtersOf, FiltersQuery, keptEvents } from '../filter-input.js';
import { periodParams, queryOne, type ColumnKind, type QueryParams } from '../query.js';
import { num, PeriodEntries, periodFields, str } from '../shape.js';
import { RAW_WINDOW } from '../sql/window.js';

/** A funnel's steps must all happen within this long of its first step (and in one session). */
export const FUNNEL_WINDOW_MS = 30 * 60 * 1000;

/*
 * The SQL text of one step's condition, by type; its value is always the bound `{s<i>:String}`
 * (a regex built from the path pattern, or the event name).
 */
const STEP_CONDITION: Readonly<Record<FunnelStep['type'], (param: string) => string>> = {
  pageview: (param) => `(kind = 'pageview' AND match(path, {${param}:String}))`,
  event: (param) => `(kind IN ('custom', 'transaction') AND event_name = {${param}:String})`,
};

/**
 * The funnel query for a list of step types: windowFunnel per session (`strict_once`: one event
 * advances at most one step), then unique visitors whose sessions reached each level. The text
 * depends only on the number and types of the steps; every value is a bound parameter. `kept`
 * (keptEventsCondition of a request's filters) narrows the events the sessions are read from.
 */
export function funnelSql(types: readonly FunnelStep['type'][], kept = '1'): string {
  const conditions = types.map((t, i) => STEP_CONDITION[t](`s${i + 1}`)).join(',\n      ');
  const counts = types.map((_, i) => `uniqExactIf(visitor, level >= ${i + 1}) AS step_${i + 1}`).join(',\n       ');
  return `
SELECT ${counts}
FROM (
  SELECT session_id, any(visitor_id) AS visitor,
    windowFunnel({window:UInt64}, 'strict_once')(toUInt64(toUnixTimestamp64Milli(ts)),
      ${conditions}) AS level
  FROM events
  WHERE ${RAW_WINDOW} AND kind IN ('pageview', 'custom', 'transaction') AND (${kept})
  GROUP BY session_id
  HAVING level > 0
)`;
}

const stepParam = (s: FunnelStep) => (s.type === 'pageview' ? pathPatternRegex(s.value) : s.value);

const Step = v.object({
  index: num('Step number, from 1'),
  type: v.pipe(v.picklist(FUNNEL_STEP_TYPES), v.description('pageview or event')),
  value: str('Path pattern or event name'),
  visitors: num('Unique visitors with a session that reached this step'),
  conversionRate: v.pipe(v.nullable(v.number()), v.description('visitors ÷ visitors of step 1; null when step 1 has none')),
  dropOff: num('Visitors lost since the previous step (0 for step 1)'),
  dropOffRate: v.pipe(v.nullable(v.number()), v.description('dropOff ÷ visitors of the previous step; null for step 1 or when it had none')),
});
export const FunnelResultResponse = v.object({
  ...PeriodEntries,
  funnel: v.object({ id: str('Funnel id'), name: str('Funnel name') }),
  steps: v.array(Step),
});
type FunnelResult = v.InferOutput<typeof FunnelResultResponse>;
type StepResult = v.InferOutput<typeof Step>;

/** The funnel the request names (its `id` path parameter); 404 when the project has none of that id. */
async function funnelOf(ctx: ReportContext, input: object): Promise<Funnel> {
  const { id } = input as { id: string };
  const funnel = await funnelStore.get(ctx.deps.redis, ctx.project.id, id);
  if (!funnel) throw new ApiError(404, GoalMessages.funnelNotFound);
  return funnel;
}

/**
 * GET /:domain/funnels/:id — visitors per step over the period, from raw events.
 */
export const funnelReport = defineReport({
  name: 'funnel',
  // The definition lives in Redis and changes without a data version moving: an answer is reused only for the same one.
  dependsOn: async (ctx, input) => ({ definition: await funnelOf(ctx, input) }),
  path: '/:domain/funnels/:id',
  summary: 'Funnel conversion: visitors per step, conversion and drop-off',
  description:
    'A session reaches step k when steps 1…k happen in that order within one session and within 30 minutes of step 1 ' +
    '(ClickHouse windowFunnel; one event counts for one step). A step counts the unique visitors with a session reaching ' +
    "it. Pageview steps match the path pattern (`*` = any characters, `/` included); event steps match custom or transaction names. Unknown id → 404 `{\"error\":\"Funnel not found\"}`. " +
    'With `filters`, sessions are read from the events the filters keep only (a visit-level filter keeps whole sessions; an event-level one, e.g. page==/pricing, drops the other events from the funnel).',
  query: ranged(v.object({ ...rangeOnlyEntries(), ...FiltersQuery })),
  params: v.object({ domain: v.string(), id: v.pipe(v.string(), v.minLength(1)) }),
  response: FunnelResultResponse,
  async run(ctx, input): Promise<FunnelResult> {
    const funnel = (input as { definition?: Funnel }).definition ?? (await funnelOf(ctx, input));
    const { period } = await resolveInput(ctx, input);
    const base: QueryParams = { ...periodParams(ctx.project.id, period), window: FUNNEL_WINDOW_MS };
    funnel.steps.forEach((s, i) => (base[`s${i + 1}`] = stepParam(s)));
    const { kept, params } = keptEvents(filtersOf(input), base);
    const spec: Record<string, ColumnKind> = Object.fromEntries(funnel.steps.map((_, i) => [`step_${i + 1}`, 'number']));
    const row = await queryOne(ctx.deps, funnelSql(funnel.steps.map((s) => s.type), kept), params, spec);

    const counts = funnel.steps.map((_, i) => row[`step_${i + 1}`] as number);
    const first = counts[0]!;
    const steps = funnel.steps.map((s, i): StepResult => {
      const visitors = counts[i]!;
      const previous = i === 0 ? null : counts[i - 1]!;
      const dropOff = previous === null ? 0 : previous - visitors;
      return {
        index: i + 1,
        type: s.type,
        value: s.value,
        visitors,
        conversionRate: first > 0 ? visitors / first : null,
        dropOff,
        dropOffRate: previous ? dropOff / previous : null,
      };
    });
    return { ...periodFields(period), funnel: { id: funnel.id, name: funnel.name }, steps };
  },
  csv: {
    title: 'funnel',
    columns: [
      { header: 'step', value: (s: StepResult) => s.index },
      { header: 'type', value: (s) => s.type },
      { header: 'value', value: (s) => s.value },
      { header: 'visitors', value: (s) => s.visitors },
      { header: 'conversion_rate', value: (s) => s.conversionRate },
      { header: 'drop_off', value: (s) => s.dropOff },
      { header: 'drop_off_rate', value: (s) => s.dropOffRate },
    ],
    rows: (r: FunnelResult) => r.steps,
  },
});
