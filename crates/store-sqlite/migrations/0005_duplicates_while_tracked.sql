-- A number is a duplicate while any request for it is still followed, waiting for its
-- manifest or stopped (resume it instead): two such requests would fight over one shipment.
DROP INDEX tracking_requests_active_number;
CREATE UNIQUE INDEX tracking_requests_active_number
    ON tracking_requests (account_id, scac, request_number)
    WHERE status IN ('pending', 'awaiting_manifest', 'created', 'tracking_stopped');
