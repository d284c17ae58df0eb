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
 * Prefix of the fields holding a project's latest-row stamp: `<project token>.<every-project token>|<epoch ms>`,
 * no earlier than every row of the project stored when those tokens were current (README "The latest-row stamp").
 */
const LATEST = 'latest:';

/**
 * Moves versions (ARGV[3 .. 2 + 2 × ARGV[2]]: field, token pairs, as HSET takes them) and carries
 * the latest-row stamp of each project in ARGV[3 + 2 × ARGV[2] ..] (project id, latest ms pairs)
 * over to its new token, raised to the written rows' latest, where the stamp was valid for the
 * token it replaces. Everything else a move touches loses its stamp by the token changing. One
 * script, so no move of another writer falls between reading a stamp and carrying it.
 */
const MOVE_SCRIPT = `
local key = KEYS[1]
local every = redis.call('HGET', key, ARGV[1])
local moves = tonumber(ARGV[2])
local tokens, fields = {}, {}
for i = 3, 2 + 2 * moves, 2 do
  tokens[ARGV[i]] = ARGV[i + 1]
  table.insert(fields, ARGV[i]); table.insert(fields, ARGV[i + 1])
end
local stamps = {}
if every and not tokens[ARGV[1]] then
  for i = 3 + 2 * moves, #ARGV, 2 do
    local id, latest = ARGV[i], ARGV[i + 1]
    local current, stamp = redis.call('HGET', key, id), redis.call('HGET', key, '${LATEST}' .. id)
    if tokens[id] and current and stamp then
      local bar = string.find(stamp, '|', 1, true)
      if bar and string.sub(stamp, 1, bar - 1) == current .. '.' .. every then
        local kept = string.sub(stamp, bar + 1)
        if tonumber(latest) > tonumber(kept) then kept = latest end
        table.insert(stamps, '${LATEST}' .. id); table.insert(stamps, tokens[id] .. '.' .. every .. '|' .. kept)
      end
    end
  end
end
redis.call('HSET', key, unpack(fields))
if #stamps > 0 then redis.call('HSET', key, unpack(stamps)) end
return #stamps / 2`;

/**
 * Keeps a latest-row stamp (ARGV[2] \`<tokens>|<ms>\`) for project ARGV[1] only while its tokens are
 * the project's current ones: a stamp measured before a move never overwrites one carried past it.
 * A stamp already kept for the same tokens is raised, never lowered.
 */
const MARK_SCRIPT = `
local key, id, stamp = KEYS[1], ARGV[1], ARGV[2]
local bar = string.find(stamp, '|', 1, true)
local tokens = string.sub(stamp, 1, bar - 1)
local current, every = redis.call('HGET', key, id), redis.call('HGET', key, ARGV[3])
if not current or not every or current .. '.' .. every ~= tokens then return 0 end
local kept = redis.call('HGET', key, '${LATEST}' .. id)
local keptBar = kept and string.find(kept, '|', 1, true)
if keptBar and string.sub(kept, 1, keptBar - 1) == tokens and tonumber(string.sub(kept, keptBar + 1)) >= tonumber(string.sub(stamp, bar + 1)) then return 0 end
redis.call('HSET', key, '${LATEST}' .. id, stamp)
return 1`;

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
  /**
   * Both, in one read of Redis, with the project's latest-row stamp when one is kept for the
   * current version: an instant no earlier than any row stored of the project (epoch ms), else null.
   */
  both(projectId: string): Promise<{ current: string; closedHours: ClosedHours; latestRow: number | null }>;
  /** Keeps the floorless mark measured at closed-hours `version` (read before measuring); a later version ignores it. */
  markFloorless(projectId: string, version: string, fromMs: number): Promise<void>;
  /**
   * Keeps `latestMs`, read from ClickHouse at `version` (read before reading) and no earlier than
   * any row stored then, as the project's latest-row stamp; ignored once the version has moved.
   */
  markLatestRow(projectId: string, version: string, latestMs: number): Promise<void>;
  /**
   * Moves the version of these projects, or of every project, and their closed-hours version with
   * `closedHours`; never rejects. `latestRows` (project → the written rows' latest `ts`, epoch ms)
   * carries each project's latest-row stamp over to its new version; a project written without
   * one loses its stamp (the next reader reads ClickHouse and marks it again).
   */
  moved(projectIds: readonly string[] | 'all', opts?: { closedHours?: boolean; latestRows?: ReadonlyMap<string, number> }): Promise<void>;
  /** Drops what is kept for deleted projects, once none of their writes can come any more; a later read starts a new token. */
  forget(projectIds: readonly string[]): Promise<void>;
}

const freshToken = () => crypto.randomUUID();
/** The Redis tokens of a version (`<project>.<every project>.<local epoch>`), which a latest-row stamp is kept for. */
const stampTokens = (version: string) => version.split('.').slice(0, 2).join('.');

/** Past this many projects waiting for a move, every project's version is moved instead. */
const MAX_PENDING = 10_000;
/** The most fields a move that carries latest-row stamps sets (MOVE_SCRIPT); a larger move carries none. */
const MOST_FIELDS_CARRIED = 1_000;

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
  const moveNow = async (projectIds: readonly string[], all: boolean, closedHours: boolean, latestRows?: ReadonlyMap<string, number>) => {
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
    // A project with a move still waiting was written without a stamp carried: it loses it. So do
    // all when many waiting moves are made at once (the script's HSET takes its fields as Lua
    // call arguments, which are bounded): that follows only an outage of Redis.
    const few = Object.keys(fields).length <= MOST_FIELDS_CARRIED;
    const carried = projectIds.flatMap((id) => {
      const latest = latestRows?.get(id);
      return !few || latest === undefined || !Number.isFinite(latest) || waiting.fields.has(id) ? [] : [id, String(Math.trunc(latest))];
    });
    if (carried.length === 0) await redis.hset(key, fields);
    else await redis.eval(MOVE_SCRIPT, [key], [EVERY_PROJECT, String(Object.keys(fields).length), ...Object.entries(fields).flat(), ...carried]);
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
  const withClosedHours = async (
    projectId: string,
    before: readonly (readonly [string, string])[],
    extra: readonly string[] = [],
  ): Promise<{ versions: string[]; closedHours: ClosedHours; extra: (string | null)[] }> => {
    const read = await versionsOf([...before, closedFields(projectId)], [FLOORLESS + projectId, ...extra]);
    const version = read.versions.at(-1)!;
    const [markedAt, from] = (read.extra[0] ?? '').split('|');
    return { versions: read.versions, closedHours: { version, floorlessFrom: markedAt === version && from ? Number(from) : null }, extra: read.extra.slice(1) };
  };
  return {
    current: async (projectId) => (await versionsOf([currentFields(projectId)])).versions[0]!,
    closedHours: async (projectId) => (await withClosedHours(projectId, [])).closedHours,
    async both(projectId) {
      const { versions, closedHours, extra } = await withClosedHours(projectId, [currentFields(projectId)], [LATEST + projectId]);
      const current = versions[0]!;
      const [tokens, latest] = String(extra[0] ?? '').split('|');
      return { current, closedHours, latestRow: latest && tokens === stampTokens(current) ? Number(latest) : null };
    },
    async markFloorless(projectId, version, fromMs) {
      await redis.hset(key, { [FLOORLESS + projectId]: `${version}|${Math.trunc(fromMs)}` });
    },
    async markLatestRow(projectId, version, latestMs) {
      if (!Number.isFinite(latestMs)) return;
      await redis.eval(MARK_SCRIPT, [key], [projectId, `${stampTokens(version)}|${Math.trunc(latestMs)}`, EVERY_PROJECT]);
    },
    async forget(projectIds) {
      if (projectIds.length === 0) return;
      for (const id of projectIds) for (const name of [id, CLOSED + id]) waiting.fields.delete(name);
      const [first, ...rest] = projectIds.flatMap((id) => [id, CLOSED + id, FLOORLESS + id, LATEST + id]);
      await redis.hdel(key, first!, ...rest);
    },
    async moved(projectIds, opts = {}) {
      const ids = projectIds === 'all' ? [] : projectIds;
      const closedHours = opts.closedHours === true;
      try {
        await moveNow(ids, projectIds === 'all', closedHours, opts.latestRows);
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
