-- 0005: event markers of a host (kernel log lines such as a NIC reset, or
-- events posted through the API), at wall-clock times in Unix nanoseconds.
-- They belong to the host, not to a capture: a marker may fall between
-- captures, and outlives the captures pruned around it. The same text at
-- the same time is stored once, so importing a log twice adds nothing.

-- +goose Up
CREATE TABLE markers (
	host TEXT    NOT NULL,
	t_ns INTEGER NOT NULL,
	text TEXT    NOT NULL,
	PRIMARY KEY (host, t_ns, text)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE markers;
