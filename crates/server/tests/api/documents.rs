//! Shipment documents, over HTTP.
