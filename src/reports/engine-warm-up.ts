import * as v from 'valibot';
import { inBackground } from '../adapters/coalesced-reads.js';
import type { Deps } from '../deps.js';
import type { Project } from '../projects/store.js';
import type { ReportDefinition } from './definition.js';
import { reports } from './registry.js';

/**
 * The periods warmed: the dashboard's default, whose statements (daily rollups and closed days'
 * parts) are those of 7d to 12m as well, and the two answered from the 15-minute rollups, whose
 * statements differ (README "The engine's warm-up").
 */
export const WARM_UP_PERIODS = ['30d', '24h', 'today'] as const;

/**
 * What a dashboard adds to the period when its viewer narrows or compares it: a filter by a visit's
 * attribute (every such filter keeps the events of matching visits; the attributes share one
 * column type), one by source, which meets the visit pass grouped by source (referrers, stats)
 * and compiles apart, one by page (keeps matching events), and a comparison. Their statements
 * aggregate differently from the period's alone, so without these the fourth filtered or compared
 * ask after a start paid the compilation (README "The engine's warm-up"). The values do not
 * matter: the engine compiles the same code for any. Asked at the first period only.
 */
export const WARM_UP_VARIANTS: readonly Record<string, string>[] = [
  { filters: 'country==US' },
  { filters: 'source==Google' },
  { filters: 'page==/' },
  { compare: 'previous_period' },
];

/**
 * Asks of each report and period. The engine compiles a statement's aggregate functions the
 * fourth time it meets them; the first ask of a project with no closed days' part yet reads the
 * daily rows instead, so four more make four of the statement every later ask makes.
 */
export const WARM_UP_ROUNDS = 5;

/** How long the warm-up waits after each round for the parts its asks store. */
const PARTS_WAIT_MS = 10_000;

/**
 * The project the warm-up asks about. Generated ids are `prj_` and 20 base62 characters
 * (src/ids.ts), so no project can have this one, and none of its rows are ever a user's.
 */
export const WARM_UP_PROJECT_ID = 'prj_warmup';

/**
 * The reports a dashboard asks with `query`, each with its parsed input. A report whose query
 * drops a field of `query` (one without filters or comparison) is left out: it would only repeat
 * its ask with the period alone.
 */
function reportsAsked(query: Record<string, string>): { def: ReportDefinition; input: unknown }[] {
  const out: { def: ReportDefinition; input: unknown }[] = [];
  for (const def of reports) {
    if (def.params) continue;
    const parsed = v.safeParse(def.query, query);
    if (parsed.success && Object.keys(query).every((field) => field in (parsed.output as object))) out.push({ def, input: parsed.output });
  }
  return out;
}

export interface WarmUpResult {
  /** Reports answered. */
  asked: number;
  /** The first error, when one stopped the warm-up (a ClickHouse that refuses at start). */
  error?: unknown;
}

/**
 * Asks every report a dashboard shows, `rounds` times for each of `periods` and for each of
 * `variants` at the first period, about a project with no events, so that the engine compiles the
 * reports' aggregate functions now instead of during a user's ask: the fourth ask of each
 * statement after a start otherwise took 3–4 times its usual time (README "The engine's warm-up").
 * Answers go nowhere: no answer cache, and the reads wait in a background lane behind every
 * user's. Not run inside `deps.background`: it waits for that to settle. Stops at the first
 * error, or once `signal` aborts.
 */
export async function warmUpReports(
  deps: Deps,
  opts: { periods?: readonly string[]; variants?: readonly Record<string, string>[]; rounds?: number; signal?: AbortSignal } = {},
): Promise<WarmUpResult> {
  const now = deps.clock.now();
  const project: Project = {
    id: WARM_UP_PROJECT_ID,
    name: 'Engine warm-up',
    domain: 'warm-up.invalid',
    timeZone: 'UTC',
    publicStatsEnabled: false,
    brandColor: null,
    icon: null,
    // Long before any period asked, so no range is cut at the project's start.
    createdAt: new Date(now - 400 * 86_400_000).toISOString(),
    ownerId: '',
  };
  const warmDeps: Deps = { ...deps, answers: undefined, clickhouse: inBackground(deps.clickhouse) };
  const periods = opts.periods ?? WARM_UP_PERIODS;
  const variants = (opts.variants ?? WARM_UP_VARIANTS).map((variant) => ({ period: periods[0]!, ...variant }));
  const asks = [...periods.map((period) => ({ period })), ...variants].flatMap(reportsAsked);
  let asked = 0;
  for (let round = 0; round < (opts.rounds ?? WARM_UP_ROUNDS); round++) {
    for (const { def, input } of asks) {
      if (opts.signal?.aborted) return { asked };
      try {
        await def.run({ deps: warmDeps, project, role: 'owner' }, input as never);
      } catch (error) {
        return { asked, error };
      }
      asked++;
    }
    // Asks store parts in the background (the first round's, the closed days'); the next round reads them, as a user's asks do.
    await deps.background?.settled(PARTS_WAIT_MS);
  }
  return { asked };
}
