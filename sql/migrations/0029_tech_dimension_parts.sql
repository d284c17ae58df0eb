-- The tech lists' closed days merged per dimension (README "Closed days of a period"): a row per device, per browser
-- and per OS, the states of every combination it is in merged once when the part is stored. `tech_parts` (0026) kept
-- a row per combination, whose state the lists' GROUPING SETS merged three times at every read. Names are the lists'
-- own ('Unknown' for an empty one). Key, marker and retention as the other parts; `tech_parts` is read by nothing now.
CREATE TABLE IF NOT EXISTS tech_dimension_parts
(
    project_id LowCardinality(String),
    bucket DateTime('UTC'),
    dimension LowCardinality(String),
    name String,
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

DROP TABLE IF EXISTS tech_parts;
