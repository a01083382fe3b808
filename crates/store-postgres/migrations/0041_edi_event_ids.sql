-- The EDI event ids (sender, code, container or bill, place, time) each account's
-- interchanges gave: how an interchange tells the statuses it resends from new ones with one
-- indexed probe, not by reading every stored transaction naming its numbers.
CREATE TABLE edi_event_ids (
    account_id uuid NOT NULL,
    event_id   TEXT NOT NULL,
    PRIMARY KEY (account_id, event_id)
);

-- The ids of the interchanges stored before this table: their resends are known too.
INSERT INTO edi_event_ids (account_id, event_id)
SELECT DISTINCT t.account_id, e.value ->> 'event_id'
FROM edi_transactions t, jsonb_array_elements(t.events) e
WHERE jsonb_typeof(t.events) = 'array' AND jsonb_typeof(e.value -> 'event_id') = 'string'
ON CONFLICT DO NOTHING;
