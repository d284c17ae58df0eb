-- Applied at start, where a table's TTL differs from the configured RETENTION_DAYS (a validated integer, never user input).
ALTER TABLE {table} MODIFY TTL {time_column} + INTERVAL {days} DAY
