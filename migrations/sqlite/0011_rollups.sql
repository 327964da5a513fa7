-- 0011: a capture's rollup, the per-second counts the host views read
-- (the night's timeline, comm shares, hot spots), by CPU and by command,
-- in one blob per profile (see store/rollup.go), so that a night of
-- captures is read as one row each rather than every chunk's summary.
-- Imports write it in their transaction; profiles stored before get
-- theirs from their chunk summaries when first read. It goes with its
-- profile (pruned or deleted).

-- +goose Up
CREATE TABLE rollups (
	profile INTEGER PRIMARY KEY REFERENCES profiles (pk) ON DELETE CASCADE,
	data    BLOB    NOT NULL
);

-- +goose Down
DROP TABLE rollups;
