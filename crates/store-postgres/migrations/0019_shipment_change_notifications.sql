-- Every change to a shipment or one of its containers is announced, on commit, to every
-- process listening on `tidemark_shipment_changed` (the payload is the shipment's id), so
-- that their caches of shipment reads forget it. Notifications repeated within a
-- transaction are delivered once.
CREATE FUNCTION notify_shipment_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'shipments' THEN
        PERFORM pg_notify('tidemark_shipment_changed', COALESCE(NEW.id, OLD.id)::text);
    ELSE
        PERFORM pg_notify('tidemark_shipment_changed', COALESCE(NEW.shipment_id, OLD.shipment_id)::text);
        IF TG_OP = 'UPDATE' AND NEW.shipment_id IS DISTINCT FROM OLD.shipment_id THEN
            PERFORM pg_notify('tidemark_shipment_changed', OLD.shipment_id::text);
        END IF;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER shipments_notify_change AFTER INSERT OR UPDATE OR DELETE ON shipments
    FOR EACH ROW EXECUTE FUNCTION notify_shipment_changed();
CREATE TRIGGER containers_notify_change AFTER INSERT OR UPDATE OR DELETE ON containers
    FOR EACH ROW EXECUTE FUNCTION notify_shipment_changed();
