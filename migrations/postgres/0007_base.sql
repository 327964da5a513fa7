-- 0007: the PostgreSQL schema, equal to what SQLite's migrations
-- 0001-0007 build. PostgreSQL support starts at this version, so the
-- numbers of later migrations are the same in both dialects.
--
-- A profile is a row of metadata, its interned tables as a few compressed
-- segments, and its samples as chunks: one row per second of the capture
-- holding that second's samples in one compressed blob, with a summary of
-- per-CPU and per-comm counts beside it. The encodings are the store
-- package's (store/chunk.go, store/tables.go).

-- +goose Up
CREATE TABLE profiles (
	pk           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id           TEXT    NOT NULL UNIQUE,
	name         TEXT    NOT NULL,
	file_name    TEXT    NOT NULL,
	sha256       TEXT    NOT NULL UNIQUE, -- "pending:ID" while an import is in progress
	bytes        BIGINT  NOT NULL,
	uploaded_ns  BIGINT  NOT NULL,
	metadata     TEXT    NOT NULL, -- JSON of subsecond.Metadata
	time_base    BIGINT  NOT NULL DEFAULT 0, -- unused; kept equal to SQLite's schema
	start_ns     BIGINT  NOT NULL,
	end_ns       BIGINT  NOT NULL,
	samples      BIGINT  NOT NULL,
	cpus         INTEGER NOT NULL,
	frequency_hz DOUBLE PRECISION NOT NULL,
	warnings     INTEGER NOT NULL,
	comms        BYTEA   NOT NULL DEFAULT ''::bytea,
	host         TEXT    NOT NULL DEFAULT 'unknown'
);
CREATE INDEX profiles_host ON profiles (host, start_ns);

CREATE TABLE events (
	profile BIGINT  NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	name    TEXT    NOT NULL,
	samples BIGINT  NOT NULL,
	PRIMARY KEY (profile, idx)
);

CREATE TABLE warnings (
	profile BIGINT  NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	line    INTEGER NOT NULL,
	message TEXT    NOT NULL,
	PRIMARY KEY (profile, seq)
);

CREATE TABLE segments (
	profile BIGINT  NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	kind    INTEGER NOT NULL,
	seq     INTEGER NOT NULL,
	data    BYTEA   NOT NULL,
	PRIMARY KEY (profile, kind, seq)
);

CREATE TABLE chunks (
	profile BIGINT  NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	second  BIGINT  NOT NULL,
	seq     INTEGER NOT NULL,
	samples INTEGER NOT NULL,
	summary BYTEA   NOT NULL,
	data    BYTEA   NOT NULL, -- compressed already: stored as is, out of line
	PRIMARY KEY (profile, second, seq)
);
ALTER TABLE chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- markers are a host's events (kernel log lines, or posted through the
-- API) at wall-clock times in Unix nanoseconds; see SQLite's 0005.
CREATE TABLE markers (
	host TEXT   NOT NULL,
	t_ns BIGINT NOT NULL,
	text TEXT   NOT NULL,
	PRIMARY KEY (host, t_ns, text)
);

-- +goose Down
DROP TABLE markers;
DROP TABLE chunks;
DROP TABLE segments;
DROP TABLE warnings;
DROP TABLE events;
DROP TABLE profiles;
