-- Bot hits per bot and path.
CREATE TABLE IF NOT EXISTS bots_15m
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    category Enum8('ai_answer' = 1, 'indexing' = 2, 'training' = 3, 'other' = 4),
    bot_slug LowCardinality(String),
    bot_name LowCardinality(String),
    path String,
    hits SimpleAggregateFunction(sum, UInt64),
    verified_hits SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, bucket, category, bot_slug, bot_name, path)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS bots_15m_mv TO bots_15m AS
SELECT
    project_id,
    toStartOfFifteenMinutes(ts) AS bucket,
    category,
    bot_slug,
    bot_name,
    path,
    count() AS hits,
    countIf(verified = 1) AS verified_hits
FROM bot_hits
GROUP BY project_id, bucket, category, bot_slug, bot_name, path;
