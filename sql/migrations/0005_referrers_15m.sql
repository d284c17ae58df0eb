-- Pageviews and visitor states per referring source ('(direct)' included).
CREATE TABLE IF NOT EXISTS referrers_15m
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    referrer_source LowCardinality(String),
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined(14), UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, bucket, referrer_source)
-- Granules are cut at 256 KB rather than 8192 rows, so reading one project's edge hours of a period does
-- not deserialize the states of the neighbouring days and projects sharing an 8192-row granule.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE MATERIALIZED VIEW IF NOT EXISTS referrers_15m_mv TO referrers_15m AS
SELECT
    project_id,
    toStartOfFifteenMinutes(ts) AS bucket,
    referrer_source,
    count() AS pageviews,
    uniqCombinedState(14)(visitor_id) AS visitors
FROM events
WHERE kind = 'pageview'
GROUP BY project_id, bucket, referrer_source;
