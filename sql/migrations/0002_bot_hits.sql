-- Bot traffic never reaches the human reports: it lives in its own table.
CREATE TABLE IF NOT EXISTS bot_hits
(
    project_id   LowCardinality(String),
    ts           DateTime64(3, 'UTC'),
    bot_slug     LowCardinality(String),
    bot_name     LowCardinality(String),
    category     Enum8('ai_answer' = 1, 'indexing' = 2, 'training' = 3, 'other' = 4),
    verified     UInt8,
    path         String,
    status       UInt16,
    user_agent   String
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (project_id, toDate(ts), category, bot_slug, ts)
SETTINGS non_replicated_deduplication_window = 10000;
