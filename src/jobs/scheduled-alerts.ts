import type { Deps } from '../deps.js';
import { measureAlert, type AlertFacts } from '../notify/alert-conditions.js';
import { deliverAlert, type AlertDelivery } from '../notify/alert-deliver.js';
import { decide } from '../notify/alert-rule.js';
import { alertLockKey, alertStore, type AlertType } from '../notify/alert-store.js';
import { getProject } from '../projects/store.js';
import type { Fetch } from './webhook.js';

/** Longest one runner may hold an alert (evaluation plus delivery with retries); a crashed runner frees it after this. */
const LOCK_MS = 120_000;

export interface AlertFiring extends AlertDelivery {
  projectId: string;
  alertId: string;
  type: AlertType;
  facts: AlertFacts;
}

/**
 * Evaluates every alert of every project at `now` (on each jobs run) and delivers the ones
 * that fire under the rule of notify/alert-rule.ts. Each alert is evaluated under a short Redis
 * lock, and its new state is saved before delivery, so concurrent runners never fire it twice
 * (at most once: a runner that dies mid-delivery does not resend).
 */
export async function runAlerts(
  deps: Deps,
  now: number,
  opts: { fetch?: Fetch; delaysMs?: readonly number[]; onlyProjects?: ReadonlySet<string> } = {},
): Promise<{ fired: AlertFiring[]; errors: string[] }> {
  const fired: AlertFiring[] = [];
  const errors: string[] = [];
  const { redis } = deps;
  const projectIds = opts.onlyProjects ? [...opts.onlyProjects] : await alertStore.projects(redis);
  for (const projectId of projectIds) {
    const [project, alerts] = await Promise.all([getProject(redis, projectId), alertStore.list(redis, projectId)]);
    if (!project || alerts.length === 0) {
      if (!opts.onlyProjects) await alertStore.forgetProject(redis, projectId);
      continue;
    }
    for (const alert of alerts) {
      const lock = alertLockKey(alert.id);
      if ((await redis.set(lock, now, { nx: true, px: LOCK_MS })) !== 'OK') continue;
      try {
        // Read under the lock: a runner that just finished has saved its state.
        const previous = await alertStore.state(redis, projectId, alert.id);
        const measured = await measureAlert(deps, projectId, alert, now);
        const { fire, state } = decide(previous, measured.holds, now, alert.cooldownHours);
        await alertStore.saveState(redis, projectId, alert.id, state);
        if (fire) {
          const delivery = await deliverAlert(deps, project, alert, measured.facts, now, opts);
          fired.push({ projectId, alertId: alert.id, type: alert.type, facts: measured.facts, ...delivery });
          if ('error' in (delivery.webhook ?? {})) errors.push(`alert ${alert.id} of ${project.domain}: webhook failed`);
        }
      } catch (err) {
        errors.push(`alert ${alert.id} of ${project.domain} failed: ${(err as Error).message}`);
      } finally {
        await redis.del(lock);
      }
    }
  }
  return { fired, errors };
}
