-- Pageviews and visitor states per city; rows without a known city are left out at the source.
CREATE TABLE IF NOT EXISTS cities_15m
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    country_code LowCardinality(String),
    country_name LowCardinality(String),
    city LowCardinality(String),
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined(14), UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, bucket, country_code, country_name, city)
-- Granules are cut at 256 KB rather than 8192 rows, so reading one project's edge hours of a period does
-- not deserialize the states of the neighbouring days and projects sharing an 8192-row granule.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE MATERIALIZED VIEW IF NOT EXISTS cities_15m_mv TO cities_15m AS
SELECT
    project_id,
    toStartOfFifteenMinutes(ts) AS bucket,
    country_code,
    country_name,
    city,
    count() AS pageviews,
    uniqCombinedState(14)(visitor_id) AS visitors
FROM events
WHERE kind = 'pageview' AND city != ''
GROUP BY project_id, bucket, country_code, country_name, city;
