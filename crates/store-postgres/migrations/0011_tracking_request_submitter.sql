-- The API key that submitted a tracking request (Terminal49's `user`).
ALTER TABLE tracking_requests ADD COLUMN submitted_by uuid;
