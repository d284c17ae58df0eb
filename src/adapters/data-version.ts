import type { Redis } from '@upstash/redis';

/** The Redis hash holding every project's data version (field = project id) and the all-projects epoch (field `*`). */
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

/**
 * DataVersions kept in Redis, so every instance reading the same ClickHouse sees a write by any
 * of them. Tokens are random, never counters: a Redis that lost its data starts from new tokens
 * and never meets an answer cached under an old one. When Redis refuses a move, a local epoch
 * moves instead, which this process's cache (the one place answers are kept) then never reuses.
 */
export function redisDataVersions(redis: Redis, log: (line: string) => void = () => {}): DataVersions {
  let localEpoch = 0;
  const read = async (projectId: string) => {
    const fields = await redis.hmget<Record<string, string>>(DATA_VERSION_KEY, projectId, EVERY_PROJECT);
    return { own: fields?.[projectId] ?? null, all: fields?.[EVERY_PROJECT] ?? null };
  };
  return {
    async current(projectId) {
      let { own, all } = await read(projectId);
      if (own === null || all === null) {
        // First read after a loss (or ever): agree on one token with every other reader.
        if (own === null) await redis.hsetnx(DATA_VERSION_KEY, projectId, freshToken());
        if (all === null) await redis.hsetnx(DATA_VERSION_KEY, EVERY_PROJECT, freshToken());
        ({ own, all } = await read(projectId));
        if (own === null || all === null) throw new Error('data version unreadable');
      }
      return `${own}.${all}.${localEpoch}`;
    },
    async moved(projectIds) {
      const token = freshToken();
      const fields = projectIds === 'all' ? { [EVERY_PROJECT]: token } : Object.fromEntries(projectIds.map((id) => [id, token]));
      if (Object.keys(fields).length === 0) return;
      try {
        await redis.hset(DATA_VERSION_KEY, fields);
      } catch (err) {
        localEpoch++;
        log(`[sightline] data version not moved in Redis (${err instanceof Error ? err.message : String(err)}); this process reuses no earlier answer`);
      }
    },
  };
}
