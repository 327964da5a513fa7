-- 0012: a profile's wall-clock anchor and span in its row, for the host
-- list's totals in SQL; see SQLite's 0012. The list orders hosts by their
-- bytes (COLLATE "C"), as SQLite and Go compare strings, whatever the
-- database's locale, and its index does too.

-- +goose Up
ALTER TABLE profiles ADD COLUMN wall_source TEXT;
ALTER TABLE profiles ADD COLUMN wall_approx INTEGER NOT NULL DEFAULT 0;
ALTER TABLE profiles ADD COLUMN wall_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE profiles ADD COLUMN wall_end BIGINT NOT NULL DEFAULT 0;
CREATE INDEX profiles_wall_unset ON profiles (pk) WHERE wall_source IS NULL;
CREATE INDEX profiles_hosts ON profiles (host COLLATE "C") INCLUDE (wall_source, wall_approx, samples, wall_start, wall_end)
	WHERE sha256 NOT LIKE 'pending:%';

-- +goose Down
DROP INDEX profiles_hosts;
DROP INDEX profiles_wall_unset;
ALTER TABLE profiles DROP COLUMN wall_end;
ALTER TABLE profiles DROP COLUMN wall_start;
ALTER TABLE profiles DROP COLUMN wall_approx;
ALTER TABLE profiles DROP COLUMN wall_source;
