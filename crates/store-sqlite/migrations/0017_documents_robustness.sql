-- Settings the processes share, generated once (the signing key of download links and
-- direct uploads when none is configured).
CREATE TABLE settings (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

-- A direct upload that expired unattached is discarded (no document can be made of it any
-- more), then its bytes and its row are removed by housekeeping.
ALTER TABLE direct_uploads ADD COLUMN discarded_at TEXT;
CREATE INDEX direct_uploads_unattached ON direct_uploads (expires_at) WHERE document_id IS NULL;

-- Documents stored before their classification job was queued in the same transaction may
-- have lost it to a crash: queue it for every live, unclassified document with no job.
INSERT INTO jobs (id, kind, payload, dedup_key, state, attempts, max_attempts, run_at,
                  created_at, updated_at)
SELECT d.id, 'process_document',
       json_object('account_id', d.account_id, 'document_id', d.id),
       'document:' || d.id, 'queued', 0, 10, d.created_at, d.created_at, d.created_at
FROM documents d
WHERE d.deleted_at IS NULL AND d.document_type IS NULL
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.dedup_key = 'document:' || d.id);
