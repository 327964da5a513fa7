-- 0011: a capture's rollup, the per-second counts the host views read
-- (the night's timeline, comm shares, hot spots), by CPU and by command,
-- in one blob per profile (see store/rollup.go); see SQLite's 0011.

-- +goose Up
CREATE TABLE rollups (
	profile BIGINT PRIMARY KEY REFERENCES profiles (pk) ON DELETE CASCADE,
	data    BYTEA  NOT NULL
);

-- +goose Down
DROP TABLE rollups;
