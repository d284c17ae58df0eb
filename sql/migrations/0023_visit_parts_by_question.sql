-- Parts answer filtered questions and questions grouped by up to three dimensions (README "Visits of closed
-- hours"; the cut was at UTC midnight then): a part is known by a hash of its question's dimensions and
-- filters, and keeps a row per group of values (`value`, `value1`, `value2`) with the visits' own pageviews
-- beside the kept ones (a filter on pages keeps fewer pageviews than its visits hold).
ALTER TABLE visit_parts ADD COLUMN IF NOT EXISTS value1 String DEFAULT '' AFTER value;
ALTER TABLE visit_parts ADD COLUMN IF NOT EXISTS value2 String DEFAULT '' AFTER value1;
ALTER TABLE visit_parts ADD COLUMN IF NOT EXISTS visit_pageviews Int64 DEFAULT 0 AFTER bounces;
