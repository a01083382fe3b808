-- Since when every delivery to a webhook has failed (NULL after a success), so a receiver
-- that stays down is deactivated.
ALTER TABLE webhooks ADD COLUMN failing_since TEXT;
