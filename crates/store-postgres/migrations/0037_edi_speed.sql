-- An interchange finds the requests tracking a shipment that holds a container it names
-- (`tracking_requests_naming`): by shipment, not by reading every request once for each
-- container found.
CREATE INDEX tracking_requests_by_shipment ON tracking_requests (shipment_id)
    WHERE shipment_id IS NOT NULL;
