-- A job asked for again while it runs is queued once more when its attempt ends (the work
-- that asked may have come after the attempt looked), instead of the request being lost.
ALTER TABLE jobs ADD COLUMN rerun INTEGER NOT NULL DEFAULT 0;
-- Notifications a delivery attempt has claimed and not yet recorded: if that attempt dies,
-- the webhook's next delivery job makes them due at once instead of after their lease.
ALTER TABLE webhook_notifications ADD COLUMN claimed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX webhook_notifications_claimed ON webhook_notifications (webhook_id)
    WHERE claimed = 1;
