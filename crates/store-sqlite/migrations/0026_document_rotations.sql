-- A rotated document's bytes are a new object (storage_key); the uploaded file stays, and
-- this names it (set by the first rotation, never changed after).
ALTER TABLE documents ADD COLUMN original_storage_key TEXT;
