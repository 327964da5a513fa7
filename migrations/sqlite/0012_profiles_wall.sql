-- 0012: the host list totals each host's captures in SQL, a page of hosts
-- at a time, so a profile's row carries its wall-clock anchor: the
-- source of its own anchor (subsecond.Wall*; '' when it has none, NULL
-- until the store fills it), whether that anchor is approximate, and the
-- capture's wall-clock span [wall_start, wall_end) as the host timeline
-- places it (one sampling period after the last sample), 0 and 0 without
-- a wall clock. The anchor follows from the metadata ("# captured on" is
-- parsed in Go), so the store fills the rows stored before when it opens
-- the database, those the partial index below finds. The list's index
-- covers what it reads, in host order.

-- +goose Up
ALTER TABLE profiles ADD COLUMN wall_source TEXT;
ALTER TABLE profiles ADD COLUMN wall_approx INTEGER NOT NULL DEFAULT 0;
ALTER TABLE profiles ADD COLUMN wall_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE profiles ADD COLUMN wall_end BIGINT NOT NULL DEFAULT 0;
CREATE INDEX profiles_wall_unset ON profiles (pk) WHERE wall_source IS NULL;
CREATE INDEX profiles_hosts ON profiles (host, wall_source, wall_approx, samples, wall_start, wall_end)
	WHERE sha256 NOT LIKE 'pending:%';

-- +goose Down
DROP INDEX profiles_hosts;
DROP INDEX profiles_wall_unset;
ALTER TABLE profiles DROP COLUMN wall_end;
ALTER TABLE profiles DROP COLUMN wall_start;
ALTER TABLE profiles DROP COLUMN wall_approx;
ALTER TABLE profiles DROP COLUMN wall_source;
