-- Migration 28 belongs to another branch of work that was not merged when this one was
-- written; SQLite counts migrations by position, so this placeholder keeps 29 in its place.
-- When the two meet, the other branch's file replaces this one.
SELECT 1;
