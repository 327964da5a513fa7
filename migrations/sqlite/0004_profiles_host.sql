-- 0004: every profile belongs to a host, the machine it was recorded on:
-- perf's "# hostname" unless the import named another, "unknown" when
-- neither did. The host views list a host's profiles by this column, so it
-- is indexed. Profiles stored before take the hostname their metadata
-- recorded.
--
-- A profile's wall-clock anchor is not stored: it follows from the
-- metadata (clock, reference time, tod offset, "captured on") and the last
-- sample's time, which are.

-- +goose Up
ALTER TABLE profiles ADD COLUMN host TEXT NOT NULL DEFAULT 'unknown';
UPDATE profiles SET host = COALESCE(NULLIF(json_extract(metadata, '$.hostname'), ''), 'unknown');
CREATE INDEX profiles_host ON profiles (host, start_ns);

-- +goose Down
DROP INDEX profiles_host;
ALTER TABLE profiles DROP COLUMN host;
