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

/** The reports a dashboard asks with a period alone, each with its parsed input for `period`. */
function periodReports(period: string): { def: ReportDefinition; input: unknown }[] {
  const out: { def: ReportDefinition; input: unknown }[] = [];
  for (const def of reports) {
    if (def.params) continue;
    const parsed = v.safeParse(def.query, { period });
    if (parsed.success) out.push({ def, input: parsed.output });
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
 * Asks every report a dashboard shows, `rounds` times for each of `periods`, about a project with
 * no events, so that the engine compiles the reports' aggregate functions now instead of during a
 * user's ask: the fourth ask of each statement after a start otherwise took 3–4 times its usual
 * time (README "The engine's warm-up"). Answers go nowhere: no answer cache, and the reads wait
 * in a background lane behind every user's. Not run inside `deps.background`: it waits for that
 * to settle. Stops at the first error, or once `signal` aborts.
 */
export async function warmUpReports(
  deps: Deps,
  opts: { periods?: readonly string[]; rounds?: number; signal?: AbortSignal } = {},
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
  const asks = (opts.periods ?? WARM_UP_PERIODS).flatMap(periodReports);
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
