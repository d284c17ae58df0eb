-- Pageviews and visitor states per path.
CREATE TABLE IF NOT EXISTS pages_15m
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    path String,
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, bucket, path)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS pages_15m_mv TO pages_15m AS
SELECT
    project_id,
    toStartOfFifteenMinutes(ts) AS bucket,
    path,
    count() AS pageviews,
    uniqCombinedState(visitor_id) AS visitors
FROM events
WHERE kind = 'pageview'
GROUP BY project_id, bucket, path;
