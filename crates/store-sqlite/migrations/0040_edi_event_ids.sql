-- The EDI event ids (sender, code, container or bill, place, time) each account's
-- interchanges gave: how an interchange tells the statuses it resends from new ones with one
-- indexed probe, not by reading every stored transaction naming its numbers.
CREATE TABLE edi_event_ids (
    account_id TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    PRIMARY KEY (account_id, event_id)
) WITHOUT ROWID;

-- The ids of the interchanges stored before this table: their resends are known too.
INSERT OR IGNORE INTO edi_event_ids (account_id, event_id)
SELECT t.account_id, json_extract(e.value, '$.event_id')
FROM edi_transactions t, json_each(t.events) e
WHERE json_type(e.value, '$.event_id') = 'text';
