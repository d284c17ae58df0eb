import type { Redis } from '@upstash/redis';
import { isId, newId, type IdKind } from '../ids.js';
import { ProjectKeys } from '../projects/store.js';

export const GOAL_TYPES = ['event', 'pageview', 'revenue', 'traffic', 'engagement'] as const;
export type GoalType = (typeof GOAL_TYPES)[number];

export interface Goal {
  id: string;
  name: string;
  type: GoalType;
  /** Event name, path pattern, transaction name, referrer source ('' = all) or '' (engagement). */
  value: string;
  target: number | null;
  createdAt: string;
}

export const FUNNEL_STEP_TYPES = ['pageview', 'event'] as const;
export interface FunnelStep {
  type: (typeof FUNNEL_STEP_TYPES)[number];
  /** Path pattern with `*` wildcards (pageview) or event name (event). */
  value: string;
}

export interface Funnel {
  id: string;
  name: string;
  steps: FunnelStep[];
  createdAt: string;
}

/** Upper bounds per project, so a report over every goal stays one cheap request. */
export const MAX_GOALS = 100;
export const MAX_FUNNELS = 50;

/** Error messages of goal and funnel routes and reports. */
export const GoalMessages = {
  goalNotFound: 'Goal not found',
  funnelNotFound: 'Funnel not found',
  tooManyGoals: `A project can have at most ${MAX_GOALS} goals`,
  tooManyFunnels: `A project can have at most ${MAX_FUNNELS} funnels`,
} as const;

interface Stored {
  id: string;
  createdAt: string;
}

/* A counter field inside the same hash orders records (ids are random, clocks can tie) and goes with the hash when the project is deleted. */
const SEQ_FIELD = '#seq';
type WithSeq<T> = T & { seq: number };

/**
 * KEYS[1] the hash; ARGV: id, record JSON (an object), max. Returns the new sequence number, or
 * 0 when the hash already holds `max` records. The sequence number joins the stored JSON as its
 * last field (the record text ends with its closing brace).
 */
const CREATE_SCRIPT = `
local n = redis.call('HLEN', KEYS[1])
if redis.call('HEXISTS', KEYS[1], '${SEQ_FIELD}') == 1 then n = n - 1 end
if n >= tonumber(ARGV[3]) then return 0 end
local seq = redis.call('HINCRBY', KEYS[1], '${SEQ_FIELD}', 1)
redis.call('HSET', KEYS[1], ARGV[1], string.sub(ARGV[2], 1, -2) .. ',"seq":' .. seq .. '}')
return seq`;

/**
 * One Redis hash per project and kind, field = id, value = the JSON record (plus its creation
 * sequence number). Records are small and few, so listing reads the whole hash.
 */
function recordStore<T extends Stored>(key: (projectId: string) => string, idKind: IdKind) {
  return {
    async list(redis: Redis, projectId: string): Promise<T[]> {
      const all = (await redis.hgetall<Record<string, WithSeq<T> | number>>(key(projectId))) ?? {};
      return Object.entries(all)
        .filter((entry): entry is [string, WithSeq<T>] => entry[0] !== SEQ_FIELD)
        .map(([, r]) => r)
        .sort((a, b) => a.seq - b.seq)
        .map(({ seq: _seq, ...record }) => record as unknown as T);
    },
    /** The record, or null; an id not of the kind's format (SEQ_FIELD included) without a Redis call. */
    async get(redis: Redis, projectId: string, id: string): Promise<T | null> {
      if (!isId(idKind, id)) return null;
      const found = await redis.hget<WithSeq<T>>(key(projectId), id);
      if (!found) return null;
      const { seq: _seq, ...record } = found;
      return record as unknown as T;
    },
    /**
     * Adds a record unless the project already has `max`: the count, the sequence number and
     * the write happen in one script, so concurrent requests cannot pass the limit together.
     * Null when the project is full.
     */
    async create(redis: Redis, projectId: string, input: Omit<T, 'id' | 'createdAt'>, now: number, max: number): Promise<T | null> {
      const record = { ...input, id: newId(idKind), createdAt: new Date(now).toISOString() } as T;
      const seq = await redis.eval<string[], number>(CREATE_SCRIPT, [key(projectId)], [record.id, JSON.stringify(record), String(max)]);
      return Number(seq) > 0 ? record : null;
    },
    /** True when the record existed. */
    async remove(redis: Redis, projectId: string, id: string): Promise<boolean> {
      if (!isId(idKind, id)) return false;
      return (await redis.hdel(key(projectId), id)) > 0;
    },
  };
}

/** Goals of a project, in creation order. */
export const goalStore = recordStore<Goal>(ProjectKeys.goals, 'goal');
/** Funnel definitions of a project, in creation order. */
export const funnelStore = recordStore<Funnel>(ProjectKeys.funnels, 'funnel');
