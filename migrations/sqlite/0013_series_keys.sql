-- 0013: a host keeps a bounded number of distinct series
-- (subsecond.MaxHostSeries), so that adding series asks whether each one
-- a post begins is new to the host, and counts the host's series when
-- one is: this index finds a series' blocks, and lists a host's series,
-- without scanning every block of the series' kind.

-- +goose Up
CREATE INDEX host_series_key ON host_series (host, name, cpu, label, block_ns);

-- +goose Down
DROP INDEX host_series_key;
