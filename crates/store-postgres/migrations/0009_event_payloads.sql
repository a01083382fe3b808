-- What a reference alone does not tell (a container.updated changeset), carried from the
-- domain event to its notifications.
ALTER TABLE domain_events ADD COLUMN payload jsonb;
ALTER TABLE webhook_notifications ADD COLUMN payload jsonb;
