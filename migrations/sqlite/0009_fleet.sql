-- 0009: host labels and the fleet index. Labels are key=value tags on a
-- host (subsecond.Label), set by hand or at upload. The fleet index
-- answers questions across hosts without decoding samples: per capture
-- with a wall-clock anchor, its place on the wall clock and its samples
-- per ten seconds of its own clock (subsecond.IndexSlot), and per name (a
-- command, a function or a call edge, in the fleet_names dictionary) its
-- samples per slot. The index is written in the import's transaction and
-- deleted with the profile. The encodings are the store package's
-- (store/fleetcodec.go).

-- +goose Up
CREATE TABLE host_labels (
	host  TEXT NOT NULL,
	key   TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (host, key)
) WITHOUT ROWID;

CREATE TABLE fleet_names (
	id   INTEGER PRIMARY KEY,
	kind INTEGER NOT NULL, -- subsecond.NameKind
	name TEXT    NOT NULL,
	UNIQUE (kind, name)
);

CREATE TABLE fleet_captures (
	profile   INTEGER PRIMARY KEY REFERENCES profiles (pk) ON DELETE CASCADE,
	day       INTEGER NOT NULL, -- floor(start_ns / 1 day)
	host      TEXT    NOT NULL,
	start_ns  INTEGER NOT NULL, -- Unix ns of the start of slot 0
	end_ns    INTEGER NOT NULL, -- Unix ns of the end of the last slot
	boot_ns   INTEGER NOT NULL, -- 0 when unknown
	kernel    TEXT    NOT NULL,
	cpu_model TEXT    NOT NULL,
	cpus      INTEGER NOT NULL,
	slots     BLOB    NOT NULL, -- per-slot totals and peak core share
	names     BLOB    NOT NULL  -- every name's ID and per-slot counts (store.EncodeNames)
);
-- for the captures overlapping a time range: start_ns from the range's
-- start less the longest span (the expression's index) to its end
CREATE INDEX fleet_captures_start ON fleet_captures (start_ns);
CREATE INDEX fleet_captures_span ON fleet_captures ((end_ns - start_ns));
-- for a host's newest capture (its derived labels)
CREATE INDEX fleet_captures_host ON fleet_captures (host, start_ns);

-- A row per command or function and capture (call edges, two thirds of
-- the names, are searched in fleet_captures.names instead, to keep the
-- index small). The key leads with the name so that a search, which
-- matches a few names of the dictionary, reads only those names' rows (a
-- range of the key per name and day range). Whole-capture
-- reads (the contrasts' totals) read fleet_captures.names instead, and a
-- profile's delete removes its rows by the IDs there (store/sqldb), so the
-- table has no index on profile and no foreign key, whose cascade would
-- scan it: the two took a third of the index's bytes.
CREATE TABLE fleet_counts (
	name    INTEGER NOT NULL, -- fleet_names.id
	day     INTEGER NOT NULL, -- the capture's fleet_captures.day
	profile INTEGER NOT NULL, -- profiles.pk
	total   INTEGER NOT NULL,
	slots   BLOB    NOT NULL, -- per-slot counts
	PRIMARY KEY (name, day, profile)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE fleet_counts;
DROP TABLE fleet_captures;
DROP TABLE fleet_names;
DROP TABLE host_labels;
