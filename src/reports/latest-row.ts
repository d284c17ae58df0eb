import type { DataVersions } from '../adapters/data-version.js';
import { toClickHouseDateTime64 } from '../adapters/clickhouse-time.js';
import type { Deps } from '../deps.js';

const DAY_MS = 86_400_000;

/**
 * The latest row of the project stamped on or after a UTC day (`n` = 0: none), in both raw tables
 * (their keys start with the project and the day). Bound to the day rather than to now, it is the
 * same statement for every request of the day, which the combined reads of a dashboard ask once.
 */
const LATEST_ROW_SQL = `
SELECT toUnixTimestamp64Milli(max(ts)) AS latest, count() AS n FROM (
  SELECT ts FROM events WHERE project_id = {projectId:String} AND toDate(ts) >= toDate({day:DateTime64(3, 'UTC')})
  UNION ALL
  SELECT ts FROM bot_hits WHERE project_id = {projectId:String} AND toDate(ts) >= toDate({day:DateTime64(3, 'UTC')}))`;

/**
 * An instant no earlier than any row of the project stored now (epoch ms), read from ClickHouse:
 * the latest row stamped on or after `now`'s UTC day, or the last instant before that day when
 * there is none. Reports compare it with a period's end (rows after now exist when it is not
 * earlier), so a bound from before today tells them that nothing is stored after any end today.
 */
export async function readLatestRowBound(deps: Pick<Deps, 'clickhouse'>, projectId: string, now: number): Promise<number> {
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  const result = await deps.clickhouse.query({ query: LATEST_ROW_SQL, query_params: { projectId, day: toClickHouseDateTime64(day) }, format: 'JSONEachRow' });
  const [row] = await result.json<{ latest: number | string; n: number | string }>();
  if (!row) throw new Error('aggregate query returned no row');
  return Number(row.n) > 0 ? Number(row.latest) : day - 1;
}

/**
 * readLatestRowBound, then stamped for `version` (read before reading) for the readers after this
 * one (DataVersions.markLatestRow), without waiting for the stamp.
 */
export async function readAndStamp(deps: Pick<Deps, 'clickhouse'>, versions: DataVersions, projectId: string, version: string, now: number): Promise<number> {
  const bound = await readLatestRowBound(deps, projectId, now);
  void versions.markLatestRow(projectId, version, bound).catch(() => {});
  return bound;
}

/**
 * readLatestRowBound at the project's current data version without asking ClickHouse when Redis
 * keeps the version's latest-row stamp (every live batch carries it past its move:
 * src/adapters/versioned-row-store.ts); otherwise read and stamped (readAndStamp). Without data
 * versions, or when Redis cannot be read, read from ClickHouse alone.
 */
export async function latestRowBound(deps: Pick<Deps, 'clickhouse' | 'dataVersions'>, projectId: string, now: number): Promise<number> {
  const versions = deps.dataVersions;
  const read = await versions?.both(projectId).catch(() => undefined);
  if (!versions || !read) return readLatestRowBound(deps, projectId, now);
  return read.latestRow ?? readAndStamp(deps, versions, projectId, read.current, now);
}
