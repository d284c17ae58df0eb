import type { Deps } from '../../deps.js';
import type { Project } from '../../projects/store.js';
import type { RangePeriodKey, ResolvedPeriod } from '../../reports/periods.js';
import { queryOne } from '../../reports/query.js';
import { comparePeriod, resolveRange, type CompareMode, type ProjectSpan } from '../../reports/range.js';

/** The range fields of an analysis question, as the range schemas (reports/params.ts) output them. */
export interface RangeAsked {
  period: RangePeriodKey;
  from?: string | undefined;
  to?: string | undefined;
  compare?: CompareMode | undefined;
}

/** A resolved range and, when asked, the one it is compared with. */
export interface Ranges {
  period: ResolvedPeriod;
  comparison?: ResolvedPeriod;
}

// `all` starts at the project's first stored event; the key (project_id, toDate(ts)) makes min(ts) cheap.
const FIRST_EVENT_SQL = "SELECT toUnixTimestamp64Milli(min(ts)) AS first, count() AS n FROM events WHERE project_id = {projectId:String}";

async function projectSpan(deps: Pick<Deps, 'clickhouse'>, project: Project): Promise<ProjectSpan> {
  const row = await queryOne(deps, FIRST_EVENT_SQL, { projectId: project.id }, { first: 'number', n: 'number' });
  return { firstEventAt: row.n > 0 ? row.first : null, createdAt: Date.parse(project.createdAt) };
}

/**
 * Resolves `period` (custom and all included) in the project's zone at the app clock's now, and
 * its comparison range when `compare` is given. Throws a 400 ApiError for a custom range that
 * starts after today.
 */
export async function resolveRanges(deps: Deps, project: Project, asked: RangeAsked): Promise<Ranges> {
  const now = deps.clock.now();
  const span = asked.period === 'all' ? await projectSpan(deps, project) : undefined;
  const period = resolveRange({ period: asked.period, from: asked.from, to: asked.to }, project.timeZone, now, span);
  return asked.compare ? { period, comparison: comparePeriod(period, asked.compare) } : { period };
}

/** `{from, to}` of a range as answers show it (ISO, UTC; `to` = the last instant counted). */
export const rangeBounds = (p: ResolvedPeriod) => ({ from: new Date(p.from).toISOString(), to: new Date(p.now).toISOString() });
