import { closedHoursCut } from '../analysis/closed-hours.js';
import { VISIT_SUMS } from '../analysis/plan.js';
import { runQuestion, type AnswerRow } from '../analysis/run.js';
import type { AnalysisInput } from './analysis-input.js';
import { sharedPart, sharesParts } from './answer-cache.js';
import type { ReportContext } from './definition.js';
import type { ResolvedPeriod } from './periods.js';

/** Ingest stores '(direct)' for no or a same-site referrer; an empty source is folded into it too. */
export const DIRECT_FOLD = { as: '(direct)', values: ['', '(direct)'] } as const;

/** A LIMIT (UInt32) that keeps every row: the rows partition all visits, and stats adds them up. */
const ALL_ROWS = 4_294_967_295;

/**
 * Every visit source of `period` (unfiltered) with its pageviews, visitors and the visit sums
 * (VISIT_SUMS) of its visits: one pass over the period's visits answers both the referrers list
 * and stats' bounce rate and views per visit, a part the two reports share through the answer
 * cache (sharedPart). `input` is the request's, and `period` its own range, never a compared one.
 * Like any such question, a period ending now with closed hours is answered from their visits
 * summed once an hour (answerFromParts in src/analysis/closed-hours.ts).
 */
export function visitsBySource(ctx: ReportContext, period: ResolvedPeriod, input: AnalysisInput): Promise<AnswerRow[]> {
  return sharedPart(ctx, 'visits-by-source', input, (deps) =>
    runQuestion(deps, ctx.project.id, period, { metrics: ['pageviews', 'visitors', ...VISIT_SUMS], dimensions: ['source'], filters: [], fold: DIRECT_FOLD, limit: ALL_ROWS }),
  );
}

type VisitRates = { bounceRate: number | null; viewsPerVisit: number | null };

/**
 * Bounce rate and views per visit of `period` (unfiltered). For the request's own range (`input`),
 * added up from the visits by source (the referrers report's question) where the two reports can
 * share it: through the answer cache (sharesParts), or when it is read from the visits of closed
 * hours, as the two reports' reads of a dashboard are then the same statement, which the embedded
 * engine's combined reads send once. Otherwise (a compared range, a whole pass) from one ungrouped
 * pass, which alone costs less than grouping by source (stats with `compare` at 1M events, 30d:
 * 144 → 86 ms).
 */
export async function visitRatesOf(ctx: ReportContext, period: ResolvedPeriod, input?: AnalysisInput): Promise<VisitRates> {
  if (input && (sharesParts(ctx) || closedHoursCut(ctx.deps, period) !== null)) return visitRates(await visitsBySource(ctx, period, input));
  const [row] = await runQuestion(ctx.deps, ctx.project.id, period, { metrics: ['bounceRate', 'viewsPerVisit'], dimensions: [], filters: [] });
  return { bounceRate: row?.bounceRate ?? null, viewsPerVisit: row?.viewsPerVisit ?? null } as VisitRates;
}

/** The two rates over all the visits of `rows` (visitsBySource's rows partition them): the pipeline's quotients of sums added up here. */
function visitRates(rows: readonly AnswerRow[]): VisitRates {
  let viewed = 0;
  let bounces = 0;
  let views = 0;
  for (const r of rows) {
    viewed += Number(r.viewedVisits ?? 0);
    bounces += Number(r.bounces ?? 0);
    views += Number(r.visitPageviews ?? 0);
  }
  return viewed > 0 ? { bounceRate: bounces / viewed, viewsPerVisit: views / viewed } : { bounceRate: null, viewsPerVisit: null };
}
