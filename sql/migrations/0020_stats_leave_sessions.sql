-- avgDurationSeconds is per visit: the summed leave durations over the number of sessions with at
-- least one leave event. The stats rollups gain that count as a uniqCombined(14) state. New views
-- feed only this column (the other columns of their rows take their defaults, 0 and empty states,
-- which merge away), so the existing views keep running untouched: no window in which an insert
-- misses a rollup. The backfill then covers the events stored before; a unique-count state is a
-- set, so sessions counted by both the new view and the backfill (or by a repeated backfill after
-- a crash) count once.

ALTER TABLE stats_15m ADD COLUMN IF NOT EXISTS leave_sessions AggregateFunction(uniqCombined(14), UInt64);

ALTER TABLE stats_1d ADD COLUMN IF NOT EXISTS leave_sessions AggregateFunction(uniqCombined(14), UInt64);

-- Daily twin from the 15-minute rows (as 0019); rows of the other stats view carry an empty state
-- here and are left out rather than written as empty rows. (Aliases are query-wide, hence `part`.)
CREATE MATERIALIZED VIEW IF NOT EXISTS stats_1d_leave_sessions_mv TO stats_1d AS
SELECT project_id, day AS bucket, uniqCombinedMergeState(14)(part) AS leave_sessions
FROM (SELECT project_id, leave_sessions AS part, toStartOfDay(bucket) AS day FROM stats_15m)
GROUP BY project_id, day
HAVING uniqCombinedMerge(14)(part) > 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS stats_15m_leave_sessions_mv TO stats_15m AS
SELECT project_id, toStartOfFifteenMinutes(ts) AS bucket, uniqCombinedState(14)(session_id) AS leave_sessions
FROM events
WHERE kind = 'leave'
GROUP BY project_id, bucket;

-- Inserted into the 15-minute table, so the daily view above fills stats_1d as well.
INSERT INTO stats_15m (project_id, bucket, leave_sessions)
SELECT project_id, toStartOfFifteenMinutes(ts) AS bucket, uniqCombinedState(14)(session_id) AS leave_sessions
FROM events
WHERE kind = 'leave'
GROUP BY project_id, bucket;
