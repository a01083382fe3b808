-- A job asked for again while it runs is queued once more when its attempt ends (the work
-- that asked may have come after the attempt looked), instead of the request being lost.
ALTER TABLE jobs ADD COLUMN rerun boolean NOT NULL DEFAULT false;
-- Notifications a delivery attempt has claimed and not yet recorded: if that attempt dies,
-- the webhook's next delivery job makes them due at once instead of after their lease.
ALTER TABLE webhook_notifications ADD COLUMN claimed boolean NOT NULL DEFAULT false;
CREATE INDEX webhook_notifications_claimed ON webhook_notifications (webhook_id)
    WHERE claimed;

-- Every job that becomes queued is announced, on commit, to every process listening on
-- `tidemark_jobs`, which wakes its job runners at once (polling stays as the safety net).
-- Notifications repeated within a transaction are delivered once.
CREATE FUNCTION notify_job_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tidemark_jobs', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER jobs_notify_queued AFTER INSERT OR UPDATE OF state ON jobs
    FOR EACH ROW WHEN (NEW.state = 'queued') EXECUTE FUNCTION notify_job_queued();
