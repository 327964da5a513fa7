-- 0008: a host's series (subsecond.Series: mpstat's per-CPU time, cgroup
-- counts, interrupt and network rates), recorded beside the captures on
-- the same wall clock. Like markers they belong to the host, not to a
-- capture; they are pruned with the host's captures, by time.
--
-- A row is a block: the points of one series (name, cpu, label) whose
-- times lie in ten minutes of the wall clock from block_ns, in one
-- compressed blob, with their count, first and last times and the
-- minimum, maximum and sum of their values, which a lane of wide buckets
-- reads instead of the points. The encoding is the store package's
-- (store/seriescodec.go).

-- +goose Up
CREATE TABLE host_series (
	host      TEXT    NOT NULL,
	name      TEXT    NOT NULL, -- a subsecond.SeriesKinds name
	cpu       INTEGER NOT NULL, -- -1 for the host as a whole
	label     TEXT    NOT NULL,
	block_ns  INTEGER NOT NULL, -- a multiple of ten minutes, Unix ns
	first_ns  INTEGER NOT NULL,
	last_ns   INTEGER NOT NULL,
	points    INTEGER NOT NULL,
	min_value REAL    NOT NULL,
	max_value REAL    NOT NULL,
	sum_value REAL    NOT NULL,
	data      BLOB    NOT NULL, -- last, so that reading the summary alone skips its pages
	UNIQUE (host, name, block_ns, cpu, label)
);
-- for pruning: every host's blocks before a time
CREATE INDEX host_series_block ON host_series (block_ns);

-- +goose Down
DROP TABLE host_series;
