-- Which granules of `events` may hold a visitor: the visitors list reads its latest visitors' whole period by id,
-- and any id falls in the sort key's range of a granule of nearly every day and kind, so unless the engine's
-- condition cache remembers the same ids (live traffic brings new latest visitors every batch) most of the period
-- is read (README "Visitors by id"). Materialized for the parts already stored as a background mutation; reads are
-- correct before it ends, as a part without the index is read whole.
ALTER TABLE events ADD INDEX IF NOT EXISTS visitor_bloom visitor_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE events MATERIALIZE INDEX visitor_bloom;
