-- PostgreSQL's migration 19 (the triggers that announce shipment changes to its
-- processes' caches) has no SQLite counterpart: one process has nothing to announce to.
-- Kept so a migration has the same number on both backends.
SELECT 1;
