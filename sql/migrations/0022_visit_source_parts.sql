-- The visits of a period's closed UTC days, summed per visit source, kept so that a period ending now
-- groups by session only the sessions with events since the last UTC midnight (README "Visits of closed
-- days"). A part is known by `part_key`: the period's start, the cut and the project's closed-days version,
-- which every write that may hold rows before the cut moves, so a read never meets a part of other rows.
-- Signed sums: nothing here is negative, but the reads add signed corrections to them. One row with an
-- empty source marks a part that exists (a part of no visits has no other row).
CREATE TABLE IF NOT EXISTS visit_source_parts
(
    project_id LowCardinality(String),
    part_key String,
    source String,
    pageviews Int64,
    visitors AggregateFunction(uniqCombined(14), UInt64),
    viewed Int64,
    bounces Int64,
    created DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (project_id, part_key)
-- Two processes filling the same part send the same deduplication token: it is stored once.
SETTINGS non_replicated_deduplication_window = 10000;
