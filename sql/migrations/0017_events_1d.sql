-- Daily (UTC day) twin of 0009_events_15m: same columns and precision, so reports merge whole days
-- from here and only the partial edge days from the 15-minute table (see src/reports/sql/window.ts).
CREATE TABLE IF NOT EXISTS custom_events_1d
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
-- Granules are cut at 256 KB rather than 8192 rows: a dense state is ~12 KB, and with the default one
-- granule spans many projects' days, whose states would all be read to answer one project's period.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE MATERIALIZED VIEW IF NOT EXISTS custom_events_1d_mv TO custom_events_1d AS
SELECT
    project_id,
    toStartOfDay(ts) AS bucket,
    event_name,
    kind,
    currency,
    count() AS events,
    uniqCombinedState(14)(visitor_id) AS people,
    sum(amount_cents) AS amount_cents
FROM events
WHERE kind IN ('custom', 'transaction')
GROUP BY project_id, bucket, event_name, kind, currency;
