-- The visits of a period's closed UTC days, summed per value of one visit attribute (or in all), kept so
-- that a question over a period ending now groups by session only the sessions with events since the last
-- UTC midnight (README "Visits of closed hours"). A part is known by `part_key`: the attribute, the period's
-- start, the cut and the project's closed-days version, which every write that may hold rows before the cut
-- moves, so a read never meets a part of other rows. Its `marker` row says it exists (a part of no visits
-- has no other row). Signed sums: nothing stored is negative, but reads add signed corrections to them.
CREATE TABLE IF NOT EXISTS visit_parts
(
    project_id LowCardinality(String),
    part_key String,
    marker UInt8,
    value String,
    pageviews Int64,
    events Int64,
    visitors AggregateFunction(uniqCombined(14), UInt64),
    sessions Int64,
    viewed Int64,
    bounces Int64,
    duration Int64,
    timed Int64,
    created DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (project_id, part_key)
-- Two processes filling the same part send the same deduplication token: it is stored once.
SETTINGS non_replicated_deduplication_window = 10000;
