import type { Redis } from '@upstash/redis';

/**
 * The Redis hash holding every project's data version (field = project id) and the all-projects
 * epoch (field `*`): one per ClickHouse store, shared by every instance that writes to it.
 */
export const DATA_VERSION_KEY = 'dataversion';
const EVERY_PROJECT = '*';

/**
 * Versions of what is stored, per project: an answer computed at one version is the answer
 * again while the version stays (README "Answer cache"). A version moves after every write that
 * reached ClickHouse (a flushed batch, an import block); a write whose projects are not known
 * (a batch replayed from an earlier process's journal) moves every project's at once.
 */
export interface DataVersions {
  /** The project's current version; rejects when it cannot be read (then nothing may be reused). */
  current(projectId: string): Promise<string>;
  /** Moves the version of these projects, or of every project; never rejects. */
  moved(projectIds: readonly string[] | 'all'): Promise<void>;
}

const freshToken = () => crypto.randomUUID();

/** Past this many projects waiting for a move, every project's version is moved instead. */
const MAX_PENDING = 10_000;

/**
 * DataVersions kept in Redis, so every instance reading the same ClickHouse sees a write by any
 * of them. Tokens are random, never counters: a Redis that lost its data starts from new tokens
 * and never meets an answer cached under an old one. When Redis refuses a move, a local epoch
 * moves at once (this process reuses nothing older) and the move waits: it is made with the next
 * move or version read that Redis accepts, so other instances learn of the write as soon as
 * Redis answers again.
 */
export function redisDataVersions(redis: Redis, log: (line: string) => void = () => {}, key: string = DATA_VERSION_KEY): DataVersions {
  let localEpoch = 0;
  const waiting = { projects: new Set<string>(), all: false };
  const moveNow = async (projectIds: readonly string[], all: boolean) => {
    const token = freshToken();
    const fields: Record<string, string> = Object.fromEntries([...waiting.projects, ...projectIds].map((id) => [id, token]));
    if (all || waiting.all) fields[EVERY_PROJECT] = token;
    if (Object.keys(fields).length === 0) return;
    await redis.hset(key, fields);
    waiting.projects.clear();
    waiting.all = false;
  };
  const read = async (projectId: string) => {
    const fields = await redis.hmget<Record<string, string>>(key, projectId, EVERY_PROJECT);
    return { own: fields?.[projectId] ?? null, all: fields?.[EVERY_PROJECT] ?? null };
  };
  return {
    async current(projectId) {
      if (waiting.all || waiting.projects.size > 0) await moveNow([], false);
      let { own, all } = await read(projectId);
      if (own === null || all === null) {
        // First read after a loss (or ever): agree on one token with every other reader.
        if (own === null) await redis.hsetnx(key, projectId, freshToken());
        if (all === null) await redis.hsetnx(key, EVERY_PROJECT, freshToken());
        ({ own, all } = await read(projectId));
        if (own === null || all === null) throw new Error('data version unreadable');
      }
      return `${own}.${all}.${localEpoch}`;
    },
    async moved(projectIds) {
      const ids = projectIds === 'all' ? [] : projectIds;
      try {
        await moveNow(ids, projectIds === 'all');
      } catch (err) {
        localEpoch++;
        if (projectIds === 'all' || waiting.projects.size + ids.length > MAX_PENDING) {
          waiting.all = true;
          waiting.projects.clear();
        } else for (const id of ids) waiting.projects.add(id);
        log(`[sightline] data version not moved in Redis (${err instanceof Error ? err.message : String(err)}); this process reuses no earlier answer, and the move is made once Redis answers`);
      }
    },
  };
}
