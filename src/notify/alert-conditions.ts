import type { Deps } from '../deps.js';
import { toClickHouseDateTime } from '../adapters/clickhouse-time.js';
import { queryOne } from '../reports/query.js';
import type { Alert } from './alert-store.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A drop needs at least this many visitors in the week-earlier window to mean anything. */
export const DROP_MIN_BASELINE = 20;

const WINDOW = "project_id = {projectId:String} AND ts >= {from:DateTime64(3, 'UTC')} AND ts < {to:DateTime64(3, 'UTC')}";

/* Visitors as in the stats report: unique visitor ids with a pageview. */
const SPIKE_SQL = `SELECT uniqCombined(14)(visitor_id) AS visitors FROM events WHERE ${WINDOW} AND kind = 'pageview'`;

/* Two 24-hour windows a week apart, read in one pass: [from, to) and [weekFrom, weekTo). */
const DROP_SQL = `
SELECT uniqCombinedIf(14)(visitor_id, ts >= {recentFrom:DateTime64(3, 'UTC')}) AS recent,
       uniqCombinedIf(14)(visitor_id, ts < {weekTo:DateTime64(3, 'UTC')}) AS week_before
FROM events
WHERE project_id = {projectId:String} AND kind = 'pageview'
  AND ((ts >= {recentFrom:DateTime64(3, 'UTC')} AND ts < {to:DateTime64(3, 'UTC')}) OR (ts >= {weekFrom:DateTime64(3, 'UTC')} AND ts < {weekTo:DateTime64(3, 'UTC')}))`;

/* Any event counts as a sign of life: events in the silent window, events in the 24 h before it, and the last one. */
const SILENT_SQL = `
SELECT countIf(ts >= {quietFrom:DateTime64(3, 'UTC')}) AS recent, countIf(ts < {quietFrom:DateTime64(3, 'UTC')}) AS before,
       toUnixTimestamp64Milli(max(ts)) AS last_ms
FROM events WHERE ${WINDOW}`;

export type AlertFacts =
  | { type: 'spike'; visitors: number; threshold: number }
  | { type: 'drop'; visitors: number; weekBefore: number; percent: number }
  | { type: 'silent'; hours: number; lastEventAt: number | null };

export interface Measured {
  /** Whether the alert's condition holds now. */
  holds: boolean;
  facts: AlertFacts;
}

/** Evaluates one alert's condition at `now` over raw events (bound parameters only). */
export async function measureAlert(deps: Pick<Deps, 'clickhouse'>, projectId: string, alert: Alert, now: number): Promise<Measured> {
  const t = (ms: number) => toClickHouseDateTime(ms);
  switch (alert.type) {
    case 'spike': {
      const threshold = alert.visitors ?? 0;
      const row = await queryOne(deps, SPIKE_SQL, { projectId, from: t(now - HOUR), to: t(now) }, { visitors: 'number' });
      return { holds: row.visitors >= threshold, facts: { type: 'spike', visitors: row.visitors, threshold } };
    }
    case 'drop': {
      const percent = alert.percent ?? 0;
      const row = await queryOne(
        deps,
        DROP_SQL,
        { projectId, recentFrom: t(now - DAY), to: t(now), weekFrom: t(now - 7 * DAY - DAY), weekTo: t(now - 7 * DAY) },
        { recent: 'number', week_before: 'number' },
      );
      const holds = row.week_before >= DROP_MIN_BASELINE && row.recent * 100 <= row.week_before * percent;
      return { holds, facts: { type: 'drop', visitors: row.recent, weekBefore: row.week_before, percent } };
    }
    case 'silent': {
      const hours = alert.hours ?? 1;
      const quietFrom = now - hours * HOUR;
      const row = await queryOne(deps, SILENT_SQL, { projectId, from: t(quietFrom - DAY), to: t(now), quietFrom: t(quietFrom) }, {
        recent: 'number',
        before: 'number',
        last_ms: 'number?',
      });
      return { holds: row.recent === 0 && row.before > 0, facts: { type: 'silent', hours, lastEventAt: row.before + row.recent > 0 ? row.last_ms : null } };
    }
  }
}
