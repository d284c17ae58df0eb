-- No event of the session is older than this (live sessions: the first event's time less the idle
-- time, README "Visits of closed hours"); 0 when unknown (imports, events recorded before it was kept).
ALTER TABLE events ADD COLUMN IF NOT EXISTS session_floor DateTime('UTC') DEFAULT 0 AFTER session_id;
