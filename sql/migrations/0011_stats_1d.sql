-- Daily (UTC day) twin of 0003_stats_15m: same columns and precision, so reports merge whole days
-- from here and only the partial edge days from the 15-minute table (see src/reports/sql/window.ts).
CREATE TABLE IF NOT EXISTS stats_1d
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined(14), UInt64),
    sessions AggregateFunction(uniqCombined(14), UInt64),
    leaves SimpleAggregateFunction(sum, UInt64),
    duration_ms SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, bucket)
-- Granules are cut at 256 KB rather than 8192 rows: a dense state is ~12 KB, and with the default one
-- granule spans many projects' days, whose states would all be read to answer one project's period.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE MATERIALIZED VIEW IF NOT EXISTS stats_1d_mv TO stats_1d AS
SELECT
    project_id,
    toStartOfDay(ts) AS bucket,
    countIf(kind = 'pageview') AS pageviews,
    uniqCombinedStateIf(14)(visitor_id, kind = 'pageview') AS visitors,
    uniqCombinedStateIf(14)(session_id, kind = 'pageview') AS sessions,
    countIf(kind = 'leave') AS leaves,
    sumIf(toUInt64(duration_ms), kind = 'leave') AS duration_ms
FROM events
WHERE kind IN ('pageview', 'leave')
GROUP BY project_id, bucket;
