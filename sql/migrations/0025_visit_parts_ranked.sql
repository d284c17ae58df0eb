-- Parts kept in the order of their visitor counts (README "Visits of closed hours"): `visitors_n` is each
-- row's unique visitors, finalized once when the part is stored. A question ranked by visitors reads the
-- visitor states of only the rows that can reach its page, and small granules let the engine skip reading
-- the states of the rest (a breakdown by page at 10M events, 30d: 5,000 stored rows, about 12 read).
-- The table is a cache of sums kept two days, so it is made again rather than copied: every part is
-- summed again on its next ask. The columns are those of migrations 0022–0023, in the same order.
DROP TABLE IF EXISTS visit_parts;
CREATE TABLE IF NOT EXISTS visit_parts
(
    project_id LowCardinality(String),
    part_key String,
    marker UInt8,
    value String,
    value1 String DEFAULT '',
    value2 String DEFAULT '',
    pageviews Int64,
    events Int64,
    visitors AggregateFunction(uniqCombined(14), UInt64),
    visitors_n UInt64 MATERIALIZED finalizeAggregation(visitors),
    sessions Int64,
    viewed Int64,
    bounces Int64,
    visit_pageviews Int64 DEFAULT 0,
    duration Int64,
    timed Int64,
    created DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (project_id, part_key, marker, visitors_n)
-- Two processes filling the same part send the same deduplication token: it is stored once.
SETTINGS index_granularity = 256, non_replicated_deduplication_window = 10000;
