-- 0008: a host's series, blocks of ten minutes of one series' points in
-- a compressed blob with their summary; see SQLite's 0008.

-- +goose Up
CREATE TABLE host_series (
	host      TEXT    NOT NULL,
	name      TEXT    NOT NULL,
	cpu       INTEGER NOT NULL,
	label     TEXT    NOT NULL,
	block_ns  BIGINT  NOT NULL,
	first_ns  BIGINT  NOT NULL,
	last_ns   BIGINT  NOT NULL,
	points    INTEGER NOT NULL,
	min_value DOUBLE PRECISION NOT NULL,
	max_value DOUBLE PRECISION NOT NULL,
	sum_value DOUBLE PRECISION NOT NULL,
	data      BYTEA   NOT NULL, -- compressed already: stored as is
	UNIQUE (host, name, block_ns, cpu, label)
);
ALTER TABLE host_series ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE INDEX host_series_block ON host_series (block_ns);

-- +goose Down
DROP TABLE host_series;
