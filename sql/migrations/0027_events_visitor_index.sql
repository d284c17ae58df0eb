-- Which granules of `events` may hold a visitor: the visitors list reads its latest visitors' whole period by id,
-- and a visitor new to the period (live traffic brings them every batch) matched a granule of every day and kind
-- in the sort key, ~40 % of a 30-day period's events at 1M (README "Visitors by id"). Materialized for the parts
-- already stored as a background mutation; reads are correct before it ends, as a part without the index is read whole.
ALTER TABLE events ADD INDEX IF NOT EXISTS visitor_bloom visitor_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE events MATERIALIZE INDEX visitor_bloom;
