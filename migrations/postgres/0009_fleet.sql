-- 0009: host labels and the fleet index; see SQLite's 0009. Here the
-- index's tables are partitioned by day (of the capture's start, on the
-- wall clock), so that retention drops a whole day's partition instead of
-- deleting its rows. An import creates its day's partitions when missing
-- (store/sqldb: CREATE TABLE IF NOT EXISTS … PARTITION OF under an
-- advisory lock), named fleet_captures_dDAY and fleet_counts_dDAY.

-- +goose Up
CREATE TABLE host_labels (
	host  TEXT NOT NULL,
	key   TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (host, key)
);

CREATE TABLE fleet_names (
	id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	kind SMALLINT NOT NULL,
	name TEXT     NOT NULL,
	UNIQUE (kind, name)
);

CREATE TABLE fleet_captures (
	profile   BIGINT  NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	day       INTEGER NOT NULL,
	host      TEXT    NOT NULL,
	start_ns  BIGINT  NOT NULL,
	end_ns    BIGINT  NOT NULL,
	boot_ns   BIGINT  NOT NULL,
	kernel    TEXT    NOT NULL,
	cpu_model TEXT    NOT NULL,
	cpus      INTEGER NOT NULL,
	slots     BYTEA   NOT NULL,
	names     BYTEA   NOT NULL, -- every name's ID and per-slot counts (store.EncodeNames)
	PRIMARY KEY (profile, day)
) PARTITION BY RANGE (day);
CREATE INDEX fleet_captures_start ON fleet_captures (start_ns);
CREATE INDEX fleet_captures_span ON fleet_captures ((end_ns - start_ns));
CREATE INDEX fleet_captures_host ON fleet_captures (host, start_ns);

CREATE TABLE fleet_counts (
	name    BIGINT  NOT NULL,
	day     INTEGER NOT NULL,
	profile BIGINT  NOT NULL, -- profiles.pk: deleted by the IDs of fleet_captures.names (see SQLite's 0009)
	total   BIGINT  NOT NULL,
	slots   BYTEA   NOT NULL,
	PRIMARY KEY (name, day, profile)
) PARTITION BY RANGE (day);

-- +goose Down
DROP TABLE fleet_counts;
DROP TABLE fleet_captures;
DROP TABLE fleet_names;
DROP TABLE host_labels;
