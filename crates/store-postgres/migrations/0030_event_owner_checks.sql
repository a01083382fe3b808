-- A poll writes dozens of carrier events, and PostgreSQL checked each row's foreign keys one
-- by one (a trigger and a query per key and row): a fifth of the database's work on a poll.
-- The event tables' owners are now checked once per statement instead, every inserted row in
-- one query, by statement-level triggers over the statement's new rows. They check more than
-- the keys did: an event's shipment and account are its container's, a raw event's account is
-- its shipment's. The application never changes these columns once a row is written and
-- never deletes shipments, containers or accounts, so the check on insert is the guarantee
-- the keys gave. Each new row looks its owner up by primary key alone, so that no plan can
-- pick an index that reads every owner of the account (which a plan made while the table was
-- small did, through containers_by_number).
ALTER TABLE transport_events
    DROP CONSTRAINT transport_events_account_id_fkey,
    DROP CONSTRAINT transport_events_shipment_id_fkey,
    DROP CONSTRAINT transport_events_container_id_fkey;
ALTER TABLE raw_events
    DROP CONSTRAINT raw_events_account_id_fkey,
    DROP CONSTRAINT raw_events_shipment_id_fkey;
ALTER TABLE domain_events DROP CONSTRAINT domain_events_account_id_fkey;

CREATE FUNCTION check_transport_event_owners() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT FROM new_rows e
        WHERE (SELECT ROW(c.shipment_id, c.account_id) FROM containers c WHERE c.id = e.container_id)
            IS DISTINCT FROM ROW(e.shipment_id, e.account_id)
    ) THEN
        RAISE EXCEPTION 'a transport event refers to a container it does not belong to'
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER transport_events_owned AFTER INSERT ON transport_events
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION check_transport_event_owners();

CREATE FUNCTION check_raw_event_owners() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT FROM new_rows e
        WHERE (SELECT s.account_id FROM shipments s WHERE s.id = e.shipment_id)
            IS DISTINCT FROM e.account_id
    ) THEN
        RAISE EXCEPTION 'a raw event refers to a shipment it does not belong to'
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER raw_events_owned AFTER INSERT ON raw_events
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION check_raw_event_owners();

CREATE FUNCTION check_domain_event_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT FROM new_rows e
        WHERE NOT EXISTS (SELECT FROM accounts a WHERE a.id = e.account_id)
    ) THEN
        RAISE EXCEPTION 'a domain event refers to an account that does not exist'
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER domain_events_owned AFTER INSERT ON domain_events
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION check_domain_event_accounts();

-- A container's events are found through UNIQUE (container_id, source_id) as well, and are few
-- enough to sort by time after reading: this index only cost every event an index insert.
DROP INDEX transport_events_by_container_time;
