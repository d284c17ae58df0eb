-- Headline numbers per 15 minutes: the finest step at which every IANA offset (+5:45, +12:45, -3:30) still
-- falls on a bucket edge, so day boundaries in any zone are exact.
CREATE TABLE IF NOT EXISTS stats_15m
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined, UInt64),
    sessions AggregateFunction(uniqCombined, UInt64),
    leaves SimpleAggregateFunction(sum, UInt64),
    duration_ms SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS stats_15m_mv TO stats_15m AS
SELECT
    project_id,
    toStartOfFifteenMinutes(ts) AS bucket,
    countIf(kind = 'pageview') AS pageviews,
    uniqCombinedStateIf(visitor_id, kind = 'pageview') AS visitors,
    uniqCombinedStateIf(session_id, kind = 'pageview') AS sessions,
    countIf(kind = 'leave') AS leaves,
    sumIf(toUInt64(duration_ms), kind = 'leave') AS duration_ms
FROM events
WHERE kind IN ('pageview', 'leave')
GROUP BY project_id, bucket;
