-- Daily (UTC day) twin of 0005_referrers_15m: same columns and precision, so reports merge whole days
-- from here and only the partial edge days from the 15-minute table (see src/reports/sql/window.ts).
CREATE TABLE IF NOT EXISTS referrers_1d
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
-- Granules are cut at 256 KB rather than 8192 rows: a dense state is ~12 KB, and with the default one
-- granule spans many projects' days, whose states would all be read to answer one project's period.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE MATERIALIZED VIEW IF NOT EXISTS referrers_1d_mv TO referrers_1d AS
SELECT
    project_id,
    toStartOfDay(ts) AS bucket,
    referrer_source,
    count() AS pageviews,
    uniqCombinedState(14)(visitor_id) AS visitors
FROM events
WHERE kind = 'pageview'
GROUP BY project_id, bucket, referrer_source;
