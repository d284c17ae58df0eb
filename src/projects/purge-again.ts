import type { Deps } from '../deps.js';
import { PROJECT_CACHE_MS } from '../ingest/state.js';
import { purgeProjectsData } from './purge.js';
import { ProjectKeys } from './store.js';

/**
 * Sorted set of deleted project ids, scored by when their rows are purged once more. Another
 * process may still accept a deleted project's events for a few seconds (its ingest cache) and
 * insert them when its batch flushes, after the first purge; the second purge removes those.
 */
export const PURGE_AGAIN_KEY = 'projects:purge-again';

/** Purges handled per tick; more wait for the next tick. */
const MAX_PER_TICK = 100;

/** When to purge again: after every cache has expired and every buffered batch was flushed, with a margin for a retried insert. */
export const purgeAgainAt = (now: number, flushIntervalMs: number) => now + PROJECT_CACHE_MS + flushIntervalMs + 60_000;

export async function schedulePurgeAgain(redis: Deps['redis'], projectId: string, at: number): Promise<void> {
  await redis.zadd(PURGE_AGAIN_KEY, { score: at, member: projectId });
}

/**
 * Runs the second purges due at `now` (the periodic jobs call it). Ids leave the set only after
 * their rows are gone, so a failure is retried on the next tick. Returns how many were purged.
 */
export async function runPendingPurges(deps: Pick<Deps, 'redis' | 'clickhouse' | 'dataVersions'>, now: number): Promise<number> {
  const ids = (await deps.redis.zrange<string[]>(PURGE_AGAIN_KEY, 0, now, { byScore: true, offset: 0, count: MAX_PER_TICK })).map(String);
  if (ids.length === 0) return 0;
  await purgeProjectsData(deps.clickhouse, ids);
  // A late event also marks the install as seen (SET NX): that key would outlive the project.
  await deps.redis.del(...ids.map(ProjectKeys.installationSeen));
  // Every late write has moved its version by now: nothing reads or moves these fields again.
  await deps.dataVersions?.forget(ids);
  await deps.redis.zrem(PURGE_AGAIN_KEY, ids[0]!, ...ids.slice(1));
  return ids.length;
}
