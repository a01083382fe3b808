-- Numbers are kept as the user wrote them (some lines' references are case-sensitive), but a
-- request for the same number in other capitals is still a duplicate of one that is followed.
DROP INDEX tracking_requests_active_number;
CREATE UNIQUE INDEX tracking_requests_active_number
    ON tracking_requests (account_id, scac, upper(request_number))
    WHERE status IN ('pending', 'awaiting_manifest', 'created', 'tracking_stopped');
