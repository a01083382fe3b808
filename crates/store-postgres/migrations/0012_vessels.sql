-- vessels: reserved; filled in by the feature that needs it.
SELECT 1;
