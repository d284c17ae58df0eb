import type { Redis } from '@upstash/redis';
import { isId, newId } from '../ids.js';
import { ProjectKeys } from '../projects/store.js';

export const ALERT_TYPES = ['spike', 'drop', 'silent'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** Most alerts per project: each is evaluated on every jobs run. */
export const MAX_ALERTS = 20;

export interface Alert {
  id: string;
  type: AlertType;
  /** spike: unique visitors in the last 60 minutes at or above which it fires. */
  visitors: number | null;
  /** drop: fires when the last 24 h have at most this % of the visitors of the same 24 h a week earlier. */
  percent: number | null;
  /** silent: fires after this many hours without any event. */
  hours: number | null;
  email: string[];
  webhookUrl: string | null;
  /** HMAC key of the webhook signature (`X-Sightline-Signature`), shown once at creation. */
  secret: string;
  cooldownHours: number;
  /** `{base}` of the dashboard link in the messages. */
  baseUrl: string;
  createdAt: string;
}

/** What the evaluator remembers between runs (one hash per project, field = alert id). */
export interface AlertState {
  lastFiredAt: number | null;
  /** The condition was seen false since the last firing: the "cleared" of clear-then-return. */
  cleared: boolean;
  lastEvaluatedAt: number;
}

/** Projects that have alerts: the set the jobs walk. */
export const ALERT_PROJECTS_KEY = 'alerts:projects';
const stateKey = ProjectKeys.alertStates;
/** Held while one runner evaluates (and delivers) an alert, so two runners never fire it twice. */
export const alertLockKey = (alertId: string) => `alert:lock:${alertId}`;

/** KEYS[1] the hash, KEYS[2] the project index; ARGV: id, JSON, max. 1 when stored, 0 when the project is full. */
const CREATE_SCRIPT = `
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[4])
return 1`;

function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export type AlertInput = Pick<Alert, 'type' | 'visitors' | 'percent' | 'hours' | 'email' | 'webhookUrl' | 'cooldownHours' | 'baseUrl'>;

export const alertStore = {
  /** Stores a new alert, or null when the project already has MAX_ALERTS. */
  async create(redis: Redis, projectId: string, input: AlertInput, now: number): Promise<Alert | null> {
    const alert: Alert = { id: newId('alert'), ...input, secret: newSecret(), createdAt: new Date(now).toISOString() };
    const stored = await redis.eval(CREATE_SCRIPT, [ProjectKeys.alerts(projectId), ALERT_PROJECTS_KEY], [alert.id, JSON.stringify(alert), MAX_ALERTS, projectId]);
    return Number(stored) === 1 ? alert : null;
  },

  /** Every alert of the project, oldest first. */
  async list(redis: Redis, projectId: string): Promise<Alert[]> {
    const all = (await redis.hgetall<Record<string, Alert>>(ProjectKeys.alerts(projectId))) ?? {};
    return Object.values(all).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  },

  async remove(redis: Redis, projectId: string, id: string): Promise<boolean> {
    if (!isId('alert', id)) return false;
    const [removed] = await redis.multi().hdel(ProjectKeys.alerts(projectId), id).hdel(stateKey(projectId), id).exec<[number, number]>();
    return removed > 0;
  },

  async states(redis: Redis, projectId: string): Promise<Record<string, AlertState>> {
    return ((await redis.hgetall<Record<string, AlertState>>(stateKey(projectId))) ?? {}) as Record<string, AlertState>;
  },

  async state(redis: Redis, projectId: string, id: string): Promise<AlertState | null> {
    return (await redis.hget<AlertState>(stateKey(projectId), id)) ?? null;
  },

  async saveState(redis: Redis, projectId: string, id: string, state: AlertState): Promise<void> {
    // Only while the alert exists: a state written after a delete would linger.
    if (await redis.hexists(ProjectKeys.alerts(projectId), id)) await redis.hset(stateKey(projectId), { [id]: state });
  },

  async projects(redis: Redis): Promise<string[]> {
    return (await redis.smembers<string[]>(ALERT_PROJECTS_KEY)).map(String);
  },

  /** Drops a project from the index (no alerts left, or the project is gone) together with its state. */
  async forgetProject(redis: Redis, projectId: string): Promise<void> {
    await redis.multi().srem(ALERT_PROJECTS_KEY, projectId).del(stateKey(projectId)).exec();
  },
};
