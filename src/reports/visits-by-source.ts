import { VISIT_SUMS } from '../analysis/plan.js';
import { runQuestion, type AnswerRow } from '../analysis/run.js';
import type { AnalysisInput } from './analysis-input.js';
import { sharedPart } from './answer-cache.js';
import type { ReportContext } from './definition.js';
import type { ResolvedPeriod } from './periods.js';

/** Ingest stores '(direct)' for no or a same-site referrer; an empty source is folded into it too. */
export const DIRECT_FOLD = { as: '(direct)', values: ['', '(direct)'] } as const;

/** A LIMIT (UInt32) that keeps every row: the rows partition all visits, and stats adds them up. */
const ALL_ROWS = 4_294_967_295;

/**
 * Every visit source of `period` (unfiltered) with its pageviews, visitors and the visit sums
 * (VISIT_SUMS) of its visits: one pass over the period's visits answers both the referrers list
 * and stats' bounce rate and views per visit. Given the request's `input` (its own period, never a
 * compared one), the pass is a part the two reports share through the answer cache (sharedPart).
 */
export function visitsBySource(ctx: ReportContext, period: ResolvedPeriod, input?: AnalysisInput): Promise<AnswerRow[]> {
  const compute = (deps: ReportContext['deps']) =>
    runQuestion(deps, ctx.project.id, period, { metrics: ['pageviews', 'visitors', ...VISIT_SUMS], dimensions: ['source'], filters: [], fold: DIRECT_FOLD, limit: ALL_ROWS });
  return input ? sharedPart(ctx, 'visits-by-source', input, compute) : compute(ctx.deps);
}

/**
 * Bounce rate and views per visit over all the visits of `rows` (visitsBySource's rows partition
 * them): the same quotients as the pipeline's metrics, of sums added up here; null without a
 * visit with a pageview.
 */
export function visitRates(rows: readonly AnswerRow[]): { bounceRate: number | null; viewsPerVisit: number | null } {
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
