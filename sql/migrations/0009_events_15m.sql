-- Custom and transaction events per name, kind and currency; amounts stay in minor units.
CREATE TABLE IF NOT EXISTS custom_events_15m
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    event_name LowCardinality(String),
    kind Enum8('pageview' = 1, 'leave' = 2, 'custom' = 3, 'transaction' = 4, 'vitals' = 5),
    currency LowCardinality(String),
    events SimpleAggregateFunction(sum, UInt64),
    people AggregateFunction(uniqCombined(14), UInt64),
    amount_cents SimpleAggregateFunction(sum, Int64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, bucket, event_name, kind, currency)
-- Granules are cut at 256 KB rather than 8192 rows, so reading one project's edge hours of a period does
-- not deserialize the states of the neighbouring days and projects sharing an 8192-row granule.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE MATERIALIZED VIEW IF NOT EXISTS custom_events_15m_mv TO custom_events_15m AS
SELECT
    project_id,
    toStartOfFifteenMinutes(ts) AS bucket,
    event_name,
    kind,
    currency,
    count() AS events,
    uniqCombinedState(14)(visitor_id) AS people,
    sum(amount_cents) AS amount_cents
FROM events
WHERE kind IN ('custom', 'transaction')
GROUP BY project_id, bucket, event_name, kind, currency;
