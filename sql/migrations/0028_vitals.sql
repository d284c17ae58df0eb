-- The vitals events again, apart (README "Vitals apart"): in `events` a day's vitals of a part are a few
-- hundred rows inside granules of every other kind, so the performance report read ~40 times the rows it
-- kept. `vitals` holds every column of `events`, sorted for that report; its view copies each vitals row
-- inserted from now on (a block the source deduplicates is not copied either, as for the rollups).
CREATE TABLE IF NOT EXISTS vitals AS events
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (project_id, toDate(ts), path, ts);

CREATE MATERIALIZED VIEW IF NOT EXISTS vitals_mv TO vitals AS
SELECT * FROM events WHERE kind = 'vitals';

-- No backfill, so nothing can be copied twice, however many processes migrate at once: reads take
-- vitals stamped before `since` from `events` and the rest from `vitals`. Each migrating process adds a
-- mark after the view exists; reads use the earliest. Where vitals are stored already the mark lies past
-- all of them and past now (a live row is stamped before its insert, so one in flight meanwhile is
-- stamped before the mark); where none are (a new install) the mark is 0: every vitals row is read from
-- the view's copy (one inserted by a process not yet upgraded while this runs would be missed).
CREATE TABLE IF NOT EXISTS vitals_since
(
    since DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY tuple();

INSERT INTO vitals_since
SELECT if(count() = 0, toDateTime64(0, 3, 'UTC'), greatest(now64(3, 'UTC'), max(ts)))
FROM events
WHERE kind = 'vitals';
