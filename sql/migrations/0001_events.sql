-- Raw events: the source of truth every rollup is derived from. Project id leads the sort key
-- so each project's rows are contiguous; the day comes next so period filters prune granules.
CREATE TABLE IF NOT EXISTS events
(
    project_id       LowCardinality(String),
    ts               DateTime64(3, 'UTC'),
    kind             Enum8('pageview' = 1, 'leave' = 2, 'custom' = 3, 'transaction' = 4, 'vitals' = 5),
    visitor_id       UInt64,
    session_id       UInt64,
    hostname         LowCardinality(String),
    path             String,
    referrer         String,
    referrer_source  LowCardinality(String),
    utm_source       LowCardinality(String),
    utm_medium       LowCardinality(String),
    utm_campaign     LowCardinality(String),
    utm_term         String,
    utm_content      String,
    country_code     LowCardinality(String),
    country_name     LowCardinality(String),
    region           LowCardinality(String),
    city             LowCardinality(String),
    device           LowCardinality(String),
    browser          LowCardinality(String),
    browser_version  LowCardinality(String),
    os               LowCardinality(String),
    os_version       LowCardinality(String),
    screen_width     UInt16,
    event_name       LowCardinality(String),
    props            Map(String, String),
    amount_cents     Int64,
    currency         LowCardinality(String),
    duration_ms      UInt32,
    lcp              Nullable(Float32),
    inp              Nullable(Float32),
    cls              Nullable(Float32),
    fcp              Nullable(Float32),
    ttfb             Nullable(Float32)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (project_id, toDate(ts), kind, visitor_id, ts)
SETTINGS non_replicated_deduplication_window = 10000;
