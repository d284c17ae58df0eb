import type { AlertState } from './alert-store.js';

const HOUR = 3_600_000;

/**
 * The firing rule: an alert fires the first time its condition holds; after that it fires
 * again only once its cooldown has passed since the last firing and its condition was seen
 * false (cleared) in between and holds again (returned). A condition that merely stays true
 * never fires twice, however long it lasts.
 */
export function decide(previous: AlertState | null, holds: boolean, now: number, cooldownHours: number): { fire: boolean; state: AlertState } {
  const lastFiredAt = previous?.lastFiredAt ?? null;
  if (!holds) return { fire: false, state: { lastFiredAt, cleared: lastFiredAt !== null, lastEvaluatedAt: now } };
  const fire = lastFiredAt === null || (previous!.cleared && now - lastFiredAt >= cooldownHours * HOUR);
  if (fire) return { fire, state: { lastFiredAt: now, cleared: false, lastEvaluatedAt: now } };
  return { fire, state: { lastFiredAt, cleared: previous?.cleared ?? false, lastEvaluatedAt: now } };
}
