-- The closed UTC days of a period, each family's daily rows merged into one row per value (README "Closed
-- days of a period"), so that a report over 30 or 90 days merges one state per value instead of one per day.
-- A part is known by `part_key`: the first day, the day it ends before and the project's closed-hours version,
-- which every write that may hold rows before the current UTC hour moves, so a read never meets a part of
-- other rows. Columns are those of the family's daily table in the same order (a read takes `* EXCEPT
-- (part_key, created)` beside the daily rows), then the key. `day_parts_made` says which parts are stored
-- (a part of no rows has none), written after the part itself. All are caches kept two days (retention).

CREATE TABLE IF NOT EXISTS pages_parts
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    path String,
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined(14), UInt64),
    part_key String,
    marker UInt8,
    created DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (project_id, part_key, marker)
-- Two processes storing the same part send the same deduplication token: it is stored once.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE TABLE IF NOT EXISTS countries_parts
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    country_code LowCardinality(String),
    country_name LowCardinality(String),
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined(14), UInt64),
    part_key String,
    marker UInt8,
    created DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (project_id, part_key, marker)
-- Two processes storing the same part send the same deduplication token: it is stored once.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE TABLE IF NOT EXISTS cities_parts
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    country_code LowCardinality(String),
    country_name LowCardinality(String),
    city LowCardinality(String),
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined(14), UInt64),
    part_key String,
    marker UInt8,
    created DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (project_id, part_key, marker)
-- Two processes storing the same part send the same deduplication token: it is stored once.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE TABLE IF NOT EXISTS tech_parts
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    device LowCardinality(String),
    browser LowCardinality(String),
    os LowCardinality(String),
    pageviews SimpleAggregateFunction(sum, UInt64),
    visitors AggregateFunction(uniqCombined(14), UInt64),
    part_key String,
    marker UInt8,
    created DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (project_id, part_key, marker)
-- Two processes storing the same part send the same deduplication token: it is stored once.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;

CREATE TABLE IF NOT EXISTS custom_events_parts
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    event_name LowCardinality(String),
    kind Enum8('pageview' = 1, 'leave' = 2, 'custom' = 3, 'transaction' = 4, 'vitals' = 5),
    currency LowCardinality(String),
    events SimpleAggregateFunction(sum, UInt64),
    people AggregateFunction(uniqCombined(14), UInt64),
    amount_cents SimpleAggregateFunction(sum, Int64),
    part_key String,
    marker UInt8,
    created DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (project_id, part_key, marker)
-- Two processes storing the same part send the same deduplication token: it is stored once.
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 262144;
