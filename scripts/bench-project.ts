/**
 * The dashboard benchmarks' project and its owner in Redis: one project per data directory
 * (`.bench-data/dashboard-<events>`), registered afresh by each run with a new owner and key.
 */
import { createAccount, createApiKey } from '../src/auth/store.js';
import { ProjectKeys, saveProject, type Project } from '../src/projects/store.js';

export const BENCH_DOMAIN = 'bench-dashboard.example';
/** A valid project id (prj_ + 20 base62 characters). */
export const BENCH_PROJECT_ID = 'prj_benchdashboard000000';
/** Days of events the dashboard benchmark imports, up to the load time. */
export const BENCH_DAYS = 90;
const DAY_MS = 86_400_000;

type Redis = Parameters<typeof saveProject>[0];

/**
 * A new owner (`<run>-<now>-<pid>@bench.example`) with an API key of `scope`, the benchmark's project as it
 * owns it, and `register`, which stores a project of its in Redis (the project, its domain, its owner).
 */
export async function benchOwner(redis: Redis, run: string, scope: 'read' | 'write', now: number) {
  const account = await createAccount(redis, { email: `${run}-${now}-${process.pid}@bench.example` }, now);
  const { key } = await createApiKey(redis, { accountId: account.id, scope, name: 'bench' }, now);
  const project: Project = {
    id: BENCH_PROJECT_ID, name: 'Dashboard bench', domain: BENCH_DOMAIN, timeZone: 'UTC', publicStatsEnabled: false,
    brandColor: null, icon: null, createdAt: new Date(now - BENCH_DAYS * DAY_MS).toISOString(), ownerId: account.id,
  };
  const register = async (p: Project) => {
    await saveProject(redis, p);
    await redis.set(ProjectKeys.domain(p.domain), p.id);
    await redis.hset(ProjectKeys.members(p.id), { [account.id]: 'owner' });
  };
  return { key, project, register };
}
