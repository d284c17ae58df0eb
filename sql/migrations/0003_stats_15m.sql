-- Headline numbers per 15 minutes: the finest step at which every IANA offset (+5:45, +12:45, -3:30) still
-- falls on a bucket edge, so day boundaries in any zone are exact. Unique counts use uniqCombined(14) here
-- and in the daily tables (0011–0017): states of one precision merge across both, exact to ≥1 000 values.
CREATE TABLE IF NOT EXISTS stats_15m
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
-- Granules are cut at 256 KB rather than 8192 rows, so reading one project's edge hours of a period does
-- not deserialize the states of the neighbouring days and projects sharing an 8192-row granule.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE MATERIALIZED VIEW IF NOT EXISTS stats_15m_mv TO stats_15m AS
SELECT
    project_id,
    toStartOfFifteenMinutes(ts) AS bucket,
    countIf(kind = 'pageview') AS pageviews,
    uniqCombinedStateIf(14)(visitor_id, kind = 'pageview') AS visitors,
    uniqCombinedStateIf(14)(session_id, kind = 'pageview') AS sessions,
    countIf(kind = 'leave') AS leaves,
    sumIf(toUInt64(duration_ms), kind = 'leave') AS duration_ms
FROM events
WHERE kind IN ('pageview', 'leave')
GROUP BY project_id, bucket;
