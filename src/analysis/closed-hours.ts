import type { Deps } from '../deps.js';
import type { ClosedHours } from '../adapters/data-version.js';
import { toClickHouseDateTime64 } from '../adapters/clickhouse-time.js';
import type { ResolvedPeriod } from '../reports/periods.js';
import { ENDED_BEFORE_NOW_MS, insertPartOnce, queryJson, queryOne, rawParams, type QueryParams } from '../reports/query.js';
import { storedPartKey } from '../reports/stored-parts.js';
import { SESSION_IDLE_MS } from '../ingest/enrich/session.js';
import { hashToUInt64 } from '../ingest/enrich/visitor.js';
import { closedHoursEnd } from '../adapters/versioned-row-store.js';
import { Binder } from './binder.js';
import { MEASURED_FLOOR_PARAM, openSessionsOf, type PlanInput } from './plan.js';
import { openFloorKey, windowFloorKey } from './open-floors.js';
import { fillPartSql, PART_EXISTS_SQL, partsCanAnswer, readPartsSql } from './plan-parts.js';

/**
 * How long after the start of a UTC hour the cut stays at the one before: a writer whose clock is
 * behind by less stamps its last rows of the old hour before the cut, or moves the closed-hours version.
 */
const CLOCK_SKEW_MS = 60_000;
const HOUR_MS = 3_600_000;

type ReadDeps = Pick<Deps, 'clickhouse' | 'latestRow' | 'clock' | 'dataVersions' | 'closedHours' | 'background' | 'openFloors' | 'storedParts'>;

/** The project's closed-hours version and mark: the ones pinned on `deps` (pinClosedHours), else read; null when unreadable or unknown. */
export async function closedHoursOf(deps: ReadDeps, projectId: string): Promise<ClosedHours | null> {
  if (deps.closedHours?.projectId === projectId) return deps.closedHours.state;
  if (!deps.dataVersions) return null;
  return deps.dataVersions.closedHours(projectId).catch(() => null);
}

/**
 * `deps` with the project's closed-hours version read once and pinned, when `period` has closed
 * hours: reads that start together after it (a report's reads, which the embedded engine takes as
 * one statement when they wait together) then need no round trip to Redis between them. The
 * answer cache pins it for everything it computes.
 */
export async function pinClosedHours<D extends ReadDeps>(deps: D, projectId: string, period: ResolvedPeriod): Promise<D> {
  if (deps.closedHours?.projectId === projectId || partsOf(deps, period) === null) return deps;
  return { ...deps, closedHours: { projectId, state: await closedHoursOf(deps, projectId) } };
}

/** Where the closed hours end at `now`: the start of its UTC hour, a minute late (CLOCK_SKEW_MS); README "Visits of closed hours". */
export const closedHoursCutAt = (now: number): number => closedHoursEnd(now - CLOCK_SKEW_MS);

/** The part that can hold a period's visits, from one reading of the clock (see partsOf). */
type Parts = { kind: 'closed'; cut: number } | { kind: 'window'; cut: number; openTo: number } | { kind: 'ended' };

/**
 * The part that can hold `period`'s visits, from one reading of the clock:
 * - `closed`, cut at the start of the current UTC hour (a minute late, CLOCK_SKEW_MS; README
 *   "Visits of closed hours"), when the period ends now and starts before the cut;
 * - `ended`, every visit, when it ended before the closed hours do (a past custom range, a
 *   comparison), as its visits are final until the closed-hours version moves (an event before its
 *   end is stamped before the hour of whoever writes it);
 * - `window`, for a range whose end follows the clock (the comparison of a period ending now) and
 *   lies in an hour before the closed hours end: cut at the start of that hour, its open sessions
 *   those with an event in the window [openFrom, openTo) around it, openTo the hour's end. Its
 *   end moves within the hour, the part (keyed by the hour) stays, and the window holds every
 *   event of the range after openFrom. Its visits are final until the closed-hours version moves,
 *   as an `ended` range's are;
 * - none for `24h`, which starts at a new instant at every request, nor for a range whose end
 *   follows the clock within the last hours.
 */
function partsOf(deps: Pick<Deps, 'clock'>, period: ResolvedPeriod): Parts | null {
  if (period.key === '24h') return null;
  const now = deps.clock.now();
  const cut = closedHoursCutAt(now);
  if (period.to >= now - ENDED_BEFORE_NOW_MS && period.from < cut) return { kind: 'closed', cut };
  if (!period.endFollowsClock) return period.to <= cut ? { kind: 'ended' } : null;
  const windowCut = closedHoursEnd(period.now);
  const openTo = windowCut + HOUR_MS;
  return openTo <= cut && period.from < windowCut ? { kind: 'window', cut: windowCut, openTo } : null;
}

/**
 * Where a period ending now is cut in two (partsOf `closed`), or null when it has no closed hour
 * to keep: it ended before now, starts at or after the cut, or is `24h`.
 */
export function closedHoursCut(deps: Pick<Deps, 'clock'>, period: ResolvedPeriod): number | null {
  const parts = partsOf(deps, period);
  return parts?.kind === 'closed' ? parts.cut : null;
}

/**
 * Where the open sessions begin: a session with no event since then cannot go on past the cut (a
 * later event joins a session only within the idle time of its last), unless a write holding
 * events before the cut moves the closed-hours version.
 */
export const openFrom = (cut: number): number => cut - SESSION_IDLE_MS;

/**
 * What reads of the open sessions bind beside the period's window (plan.ts): `openFrom`,
 * `floorlessFrom`, the floorless mark (1970 when not measured, so the open sessions of an import
 * are read from the period's start), and `openTo` when the open sessions' window ends (partsOf `window`).
 */
export const openParams = (cut: number, floorlessFrom: number | null, openTo?: number): QueryParams => ({
  openFrom: toClickHouseDateTime64(openFrom(cut)),
  floorlessFrom: toClickHouseDateTime64(floorlessFrom ?? 0),
  ...(openTo === undefined ? {} : { openTo: toClickHouseDateTime64(openTo) }),
});

/**
 * The rows of a question (plan-parts.ts partsCanAnswer) of a period ending now with closed hours
 * (partsOf), read from parts: the closed visits (no event since openFrom) summed once per
 * group of the question's dimensions, for its filters, period start, cut and closed-hours version
 * (visit_parts; a write that may hold rows before the cut moves the version, so such a part is
 * summed again), and on each read the open sessions grouped by session. A compared range whose end
 * follows the clock is read the same way around the hour it ends in, its open sessions those of a
 * window that ends with that hour (partsOf `window`). A range that ended before the cut (partsOf)
 * is read from a part of all its visits, keyed by its start and end.
 * `wholePass` answers what parts cannot: other questions, a closed-hours version that cannot be
 * read (Redis down), and a part not summed yet when `deps.background` can sum it after the answer
 * (the first ask of a question costs no more than before; without it the part is summed first).
 */
export async function answerFromParts(deps: ReadDeps, q: PlanInput, wholePass: () => Promise<Record<string, unknown>[]>): Promise<Record<string, unknown>[]> {
  const parts = partsOf(deps, q.period);
  if (parts === null || !partsCanAnswer(q)) return wholePass();
  const closedHours = await closedHoursOf(deps, q.projectId);
  if (closedHours === null) return wholePass();
  const { version } = closedHours;
  // What the stored sums depend on: the groups (time buckets are the zone's) and the filters; metrics, order and page are the read's.
  // Hashed in this turn of the event loop (SHA-256 through WebCrypto is not), so a report's reads still start together
  // and go as one statement; 64 bits and the length among one project's questions of two days (the parts' retention).
  const shape = JSON.stringify([q.dimensions, q.filters, q.period.bucketTimeZone]);
  const question = `${hashToUInt64(shape)}.${shape.length}`;
  const params = q.periodParams ?? rawParams(deps, q.projectId, q.period);
  // The floorless mark kept with the versions is the current window's; a compared window's floor is measured with its own (measureOpenFloor).
  const floorlessFrom = parts.kind === 'closed' ? closedHours.floorlessFrom : null;
  const floorKey =
    parts.kind === 'closed' ? openFloorKey(q.projectId, version, parts.cut, floorlessFrom) : parts.kind === 'window' ? windowFloorKey(q.projectId, version, parts.cut) : null;
  const floor = floorKey === null ? undefined : deps.openFloors?.get(floorKey);
  const binder = new Binder(
    parts.kind === 'ended'
      ? { ...params, partKey: `${question}:${q.period.from}-${q.period.to}-${version}` }
      : {
          ...params,
          ...openParams(parts.cut, floorlessFrom, parts.kind === 'window' ? parts.openTo : undefined),
          ...(floor === undefined ? {} : { [MEASURED_FLOOR_PARAM]: toClickHouseDateTime64(floor) }),
          // A window's part holds other sessions than a closed one of the same start and cut would: `w` keeps their keys apart.
          partKey: `${question}:${parts.kind === 'window' ? 'w' : ''}${q.period.from}-${parts.cut}-${version}`,
        },
  );
  const form = parts.kind === 'ended' ? 'ended' : 'closed';
  const sql = readPartsSql(q, binder, form);
  const storeKey = storedPartKey(q.projectId, 'visit_parts', String(binder.params.partKey));
  /** Whether the part is stored, by its marker; a marker found makes it known to this process (read at once from then on). */
  const lookUp = async (): Promise<boolean> => {
    const found = await queryOne(deps, PART_EXISTS_SQL, binder.params, { n: 'number', created: 'number' });
    if (found.n > 0) deps.storedParts?.markerFound(storeKey, 'visit_parts', found.created);
    return found.n > 0;
  };
  // Measured after the answer, for later reads.
  const measureAfter = (answer: Promise<unknown>) => {
    if (parts.kind === 'closed' && floorlessFrom === null && deps.background) markFloorless(deps, q.projectId, version, binder.params, answer);
    if (floorKey !== null && floor === undefined && deps.background) measureOpenFloor(deps, floorKey, binder.params, answer);
  };
  // A part this process saw stored is read at once; any other is looked for first. Looked for beside the read, the
  // part could land between the two (two statements side by side, or two requests to a server): the marker found,
  // the read's answer would hold the open visits alone.
  const stored = deps.storedParts?.stored(storeKey, deps.clock.now()) === true || (await lookUp().catch(() => false));
  if (!stored) {
    const fill = () => {
      // Its SQL binds values first; a part of closed visits reads its events up to openFrom.
      const fillSql = fillPartSql(q, binder, form);
      return fillPart(deps, fillSql, form === 'closed' ? { ...binder.params, readTo: binder.params.openFrom! } : binder.params, lookUp);
    };
    if (deps.background) {
      const answer = wholePass();
      // After the answer; one fill per part at a time.
      deps.background.run(partToken(binder.params), fill, answer);
      measureAfter(answer);
      return answer;
    }
    await fill();
  }
  const rows = queryJson(deps, sql, binder.params);
  measureAfter(rows);
  return rows;
}

/** What names one part's fill: its deduplication token, and its key among the background tasks. */
const partToken = (params: QueryParams) => `visit-parts:${String(params.projectId)}:${String(params.partKey)}`;

/**
 * Sums the part of closed visits (their events read up to openFrom: `readTo`), then reads its
 * marker back, so that this process reads it at once from then on (a fill whose token was seen
 * before stores nothing). The version in its key was read first: a write that lands meanwhile
 * moves the version after it is stored, so the part is either summed with its rows or never read
 * again. Fills of the same part (two requests, two processes) share a deduplication token, so it
 * is stored once.
 */
async function fillPart(deps: ReadDeps, sql: string, params: QueryParams, lookUp: () => Promise<boolean>): Promise<void> {
  await insertPartOnce(deps, sql, params, partToken(params));
  await lookUp();
}

/**
 * Measures the open sessions' floor under `key` (openFloorKey or windowFloorKey, whose version was
 * read before it: a write that lands meanwhile moves the version, so the floor is never taken for
 * a later one) and keeps it in the process's OpenFloors, in the background after `after`, once
 * per key at a time. A compared window (`openTo` bound) measures its own floorless mark first.
 */
function measureOpenFloor(deps: ReadDeps, key: string, params: QueryParams, after: Promise<unknown>): void {
  const floors = deps.openFloors;
  if (!floors) return;
  const open = openSessionsOf(params);
  const { projectId, openFrom, openTo } = params;
  const window = { projectId, openFrom, ...(openTo === undefined ? {} : { openTo }) };
  deps.background!.run(
    `open-floor:${key}`,
    async () => {
      const floorlessFrom =
        openTo === undefined ? params.floorlessFrom : toClickHouseDateTime64((await queryOne(deps, open.floorlessMarkSql, window, { from: 'number' })).from);
      floors.set(key, (await queryOne(deps, open.floorSql, { ...window, floorlessFrom }, { floor: 'number' })).floor);
    },
    after,
  );
}

/**
 * Measures the floorless mark at closed-hours `version` (read before it: a write that lands
 * meanwhile moves the version, so the mark is never taken for a later one) and keeps it, in the
 * background after `after`, once per project and version at a time. Until it is kept, the open
 * sessions of an import are read from the period's start.
 */
function markFloorless(deps: ReadDeps, projectId: string, version: string, params: QueryParams, after: Promise<unknown>): void {
  deps.background!.run(
    `floorless:${projectId}:${version}`,
    async () => {
      const { from } = await queryOne(deps, openSessionsOf(params).floorlessMarkSql, { projectId, openFrom: params.openFrom! }, { from: 'number' });
      await deps.dataVersions?.markFloorless(projectId, version, from);
    },
    after,
  );
}
