-- The client's network (autonomous system), from Cloudflare's request.cf on Workers; 0 when unknown.
ALTER TABLE events ADD COLUMN IF NOT EXISTS asn UInt32 DEFAULT 0 AFTER city;
