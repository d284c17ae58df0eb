-- A closed part's marker row keeps what the reads of its open visits need to know of the sessions
-- without a session floor (imports, README "Visits of closed hours"): the earliest event in the
-- period, before open-from, of those open when the part was summed, and how many events without a
-- floor there were since open-from. While that count stands, no such session has joined the open
-- ones, so their events are read from that instant on instead of over the whole period.
ALTER TABLE visit_parts ADD COLUMN IF NOT EXISTS floorless_from DateTime64(3, 'UTC') DEFAULT 0;
ALTER TABLE visit_parts ADD COLUMN IF NOT EXISTS floorless_events UInt64 DEFAULT 0;
