-- A poll's carrier events are most of the rows it writes, and every index on them is one
-- more insert (and WAL record) per row. Each event table now keeps only the indexes its
-- reads use:
-- - a shipment's transport events are read through its containers' keys, with
--   UNIQUE (container_id, source_id), so transport_events_by_shipment goes;
-- - raw events are only ever read by shipment, so the key a raw event is found by,
--   (shipment_id, source_id), becomes the primary key, and the index on id goes;
-- - domain events are only ever read by account in id order, so (account_id, id) becomes
--   the primary key, one index where the key on id and domain_events_by_account were two.
DROP INDEX transport_events_by_shipment;

ALTER TABLE raw_events
    DROP CONSTRAINT raw_events_pkey,
    DROP CONSTRAINT raw_events_shipment_id_source_id_key,
    ADD PRIMARY KEY (shipment_id, source_id);

ALTER TABLE domain_events
    DROP CONSTRAINT domain_events_pkey,
    ADD PRIMARY KEY (account_id, id);
DROP INDEX domain_events_by_account;

-- The owner checks of migration 30 looked each new row's owner up; a statement's rows have
-- few owners (a poll's events belong to a handful of containers, one shipment, one
-- account), so each distinct owner is now looked up once.
CREATE OR REPLACE FUNCTION check_transport_event_owners() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT FROM (SELECT DISTINCT container_id, shipment_id, account_id FROM new_rows) e
        WHERE (SELECT ROW(c.shipment_id, c.account_id) FROM containers c WHERE c.id = e.container_id)
            IS DISTINCT FROM ROW(e.shipment_id, e.account_id)
    ) THEN
        RAISE EXCEPTION 'a transport event refers to a container it does not belong to'
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION check_raw_event_owners() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT FROM (SELECT DISTINCT shipment_id, account_id FROM new_rows) e
        WHERE (SELECT s.account_id FROM shipments s WHERE s.id = e.shipment_id)
            IS DISTINCT FROM e.account_id
    ) THEN
        RAISE EXCEPTION 'a raw event refers to a shipment it does not belong to'
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION check_domain_event_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT FROM (SELECT DISTINCT account_id FROM new_rows) e
        WHERE NOT EXISTS (SELECT FROM accounts a WHERE a.id = e.account_id)
    ) THEN
        RAISE EXCEPTION 'a domain event refers to an account that does not exist'
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
