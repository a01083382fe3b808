-- The first departure estimate at the port of lading and the first arrival estimate at the
-- inland destination, kept like pod_original_eta_at so clients see how estimates moved.
ALTER TABLE shipments ADD COLUMN pol_original_etd_at timestamptz;
ALTER TABLE shipments ADD COLUMN destination_original_eta_at timestamptz;
