import type { Redis } from '@upstash/redis';
import { newId } from '../auth/tokens.js';
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
 * One Redis hash per project and kind, field = id, value = the JSON record (plus its creation
 * sequence number). Records are small and few, so listing reads the whole hash.
 */
function recordStore<T extends Stored>(key: (projectId: string) => string, idPrefix: string) {
  return {
    async list(redis: Redis, projectId: string): Promise<T[]> {
      const all = (await redis.hgetall<Record<string, WithSeq<T> | number>>(key(projectId))) ?? {};
      return Object.entries(all)
        .filter((entry): entry is [string, WithSeq<T>] => entry[0] !== SEQ_FIELD)
        .map(([, r]) => r)
        .sort((a, b) => a.seq - b.seq)
        .map(({ seq: _seq, ...record }) => record as unknown as T);
    },
    async get(redis: Redis, projectId: string, id: string): Promise<T | null> {
      if (id === SEQ_FIELD) return null;
      const found = await redis.hget<WithSeq<T>>(key(projectId), id);
      if (!found) return null;
      const { seq: _seq, ...record } = found;
      return record as unknown as T;
    },
    async count(redis: Redis, projectId: string): Promise<number> {
      const fields = await redis.hlen(key(projectId));
      return fields > 0 ? fields - 1 : 0;
    },
    async create(redis: Redis, projectId: string, input: Omit<T, 'id' | 'createdAt'>, now: number): Promise<T> {
      const record = { ...input, id: newId(idPrefix, 16), createdAt: new Date(now).toISOString() } as T;
      const seq = await redis.hincrby(key(projectId), SEQ_FIELD, 1);
      await redis.hset(key(projectId), { [record.id]: { ...record, seq } });
      return record;
    },
    /** True when the record existed. */
    async remove(redis: Redis, projectId: string, id: string): Promise<boolean> {
      if (id === SEQ_FIELD) return false;
      return (await redis.hdel(key(projectId), id)) > 0;
    },
  };
}

/** Goals of a project, in creation order. */
export const goalStore = recordStore<Goal>(ProjectKeys.goals, 'gol');
/** Funnel definitions of a project, in creation order. */
export const funnelStore = recordStore<Funnel>(ProjectKeys.funnels, 'fnl');
