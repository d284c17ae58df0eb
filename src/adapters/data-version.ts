import type { Redis } from '@upstash/redis';

/**
 * The Redis hash holding every project's data version (field = project id) and the all-projects
 * epoch (field `*`): one per ClickHouse store, shared by every instance that writes to it.
 */
export const DATA_VERSION_KEY = 'dataversion';
const EVERY_PROJECT = '*';
/** Prefix of the fields holding closed-hours versions (a project id never holds a colon). */
const CLOSED = 'closed:';
/** Prefix of the fields holding a project's floorless mark: `<closed-hours version>|<epoch ms>` (see ClosedHours). */
const FLOORLESS = 'floorless:';

/**
 * A project's closed-hours version, and what was measured at it: the earliest event of the open
 * sessions whose events carry no session floor (imported ones), as epoch ms, or null when not
 * measured at this version. Only a write that moves the version can add such events, so the mark
 * holds until it moves (README "Visits of closed hours").
 */
export interface ClosedHours {
  version: string;
  floorlessFrom: number | null;
}

/**
 * Versions of what is stored, per project: an answer computed at one version is the answer
 * again while the version stays (README "Answer cache"). A version moves after every write that
 * reached ClickHouse (a flushed batch, an import block); a write whose projects are not known
 * (a batch replayed from an earlier process's journal) moves every project's at once. Beside it,
 * the version of the rows stamped before the current UTC hour, which moves only with writes that
 * may hold such rows (imports, replays, a batch straddling the start of an hour), so that sums of closed hours
 * outlive live traffic (README "Visits of closed hours").
 */
export interface DataVersions {
  /** The project's current version; rejects when it cannot be read (then nothing may be reused). */
  current(projectId: string): Promise<string>;
  /** The version of the project's rows before the current UTC hour, with its floorless mark; rejects like `current`. */
  closedHours(projectId: string): Promise<ClosedHours>;
  /** Both, in one read of Redis. */
  both(projectId: string): Promise<{ current: string; closedHours: ClosedHours }>;
  /** Keeps the floorless mark measured at closed-hours `version` (read before measuring); a later version ignores it. */
  markFloorless(projectId: string, version: string, fromMs: number): Promise<void>;
  /** Moves the version of these projects, or of every project, and their closed-hours version with `closedHours`; never rejects. */
  moved(projectIds: readonly string[] | 'all', opts?: { closedHours?: boolean }): Promise<void>;
  /** Drops what is kept for deleted projects, once none of their writes can come any more; a later read starts a new token. */
  forget(projectIds: readonly string[]): Promise<void>;
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
  /** Moves Redis refused, made with the next one it accepts: field names (`closed:`-prefixed for closed hours) and whether every project's moved. */
  const waiting = { fields: new Set<string>(), all: false, closedAll: false };
  const moveNow = async (projectIds: readonly string[], all: boolean, closedHours: boolean) => {
    const token = freshToken();
    const names = new Set(waiting.fields);
    for (const id of projectIds) {
      names.add(id);
      if (closedHours) names.add(CLOSED + id);
    }
    const fields: Record<string, string> = Object.fromEntries([...names].map((name) => [name, token]));
    if (all || waiting.all) fields[EVERY_PROJECT] = token;
    if ((all && closedHours) || waiting.closedAll) fields[CLOSED + EVERY_PROJECT] = token;
    if (Object.keys(fields).length === 0) return;
    await redis.hset(key, fields);
    waiting.fields.clear();
    waiting.all = waiting.closedAll = false;
  };
  /**
   * The versions kept under each pair of fields (a project's and its every-project epoch; `closed:`
   * ones for closed hours), and the values of `extra` fields (null when absent), in one read.
   */
  const versionsOf = async (pairs: readonly (readonly [string, string])[], extra: readonly string[] = []): Promise<{ versions: string[]; extra: (string | null)[] }> => {
    if (waiting.all || waiting.closedAll || waiting.fields.size > 0) await moveNow([], false, false);
    const names = pairs.flat();
    const read = async () => {
      const fields = await redis.hmget<Record<string, string>>(key, ...names, ...extra);
      return [...names, ...extra].map((name) => fields?.[name] ?? null);
    };
    let values = await read();
    if (values.slice(0, names.length).includes(null)) {
      // First read after a loss (or ever): agree on one token with every other reader.
      for (const [i, name] of names.entries()) if (values[i] === null) await redis.hsetnx(key, name, freshToken());
      values = await read();
      if (values.slice(0, names.length).includes(null)) throw new Error('data version unreadable');
    }
    return { versions: pairs.map((_, i) => `${values[2 * i]}.${values[2 * i + 1]}.${localEpoch}`), extra: values.slice(names.length) };
  };
  const currentFields = (projectId: string) => [projectId, EVERY_PROJECT] as const;
  const closedFields = (projectId: string) => [CLOSED + projectId, CLOSED + EVERY_PROJECT] as const;
  /**
   * The versions under `before` (each pair of fields) and then the project's closed-hours version,
   * with its floorless mark when the mark was measured at that version, in one read.
   */
  const withClosedHours = async (projectId: string, before: readonly (readonly [string, string])[]): Promise<{ versions: string[]; closedHours: ClosedHours }> => {
    const { versions, extra } = await versionsOf([...before, closedFields(projectId)], [FLOORLESS + projectId]);
    const version = versions.at(-1)!;
    const [markedAt, from] = (extra[0] ?? '').split('|');
    return { versions, closedHours: { version, floorlessFrom: markedAt === version && from ? Number(from) : null } };
  };
  return {
    current: async (projectId) => (await versionsOf([currentFields(projectId)])).versions[0]!,
    closedHours: async (projectId) => (await withClosedHours(projectId, [])).closedHours,
    async both(projectId) {
      const { versions, closedHours } = await withClosedHours(projectId, [currentFields(projectId)]);
      return { current: versions[0]!, closedHours };
    },
    async markFloorless(projectId, version, fromMs) {
      await redis.hset(key, { [FLOORLESS + projectId]: `${version}|${Math.trunc(fromMs)}` });
    },
    async forget(projectIds) {
      if (projectIds.length === 0) return;
      for (const id of projectIds) for (const name of [id, CLOSED + id]) waiting.fields.delete(name);
      const [first, ...rest] = projectIds.flatMap((id) => [id, CLOSED + id, FLOORLESS + id]);
      await redis.hdel(key, first!, ...rest);
    },
    async moved(projectIds, opts = {}) {
      const ids = projectIds === 'all' ? [] : projectIds;
      const closedHours = opts.closedHours === true;
      try {
        await moveNow(ids, projectIds === 'all', closedHours);
      } catch (err) {
        localEpoch++;
        if (projectIds === 'all' || waiting.fields.size + 2 * ids.length > MAX_PENDING) {
          waiting.all = true;
          waiting.closedAll ||= closedHours || [...waiting.fields].some((f) => f.startsWith(CLOSED));
          waiting.fields.clear();
        } else
          for (const id of ids) {
            waiting.fields.add(id);
            if (closedHours) waiting.fields.add(CLOSED + id);
          }
        log(`[sightline] data version not moved in Redis (${err instanceof Error ? err.message : String(err)}); this process reuses no earlier answer, and the move is made once Redis answers`);
      }
    },
  };
}
