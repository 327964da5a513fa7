-- 0007: the one-row-per-sample tables go. Open converts every profile to
-- chunks (see 0006) before applying this migration, so they are empty.
-- events.period served only samples rows: a chunk encodes its weights.

-- +goose Up
DROP TABLE samples;
DROP TABLE stack_nodes;
DROP TABLE frames;
DROP TABLE strings;
ALTER TABLE events DROP COLUMN period;

-- +goose Down
ALTER TABLE events ADD COLUMN period INTEGER NOT NULL DEFAULT 0;

CREATE TABLE strings (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	s       TEXT    NOT NULL,
	PRIMARY KEY (profile, idx)
) WITHOUT ROWID;

CREATE TABLE frames (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	symbol  INTEGER NOT NULL,
	dso     INTEGER NOT NULL,
	srcline INTEGER NOT NULL,
	addr    INTEGER NOT NULL,
	kind    INTEGER NOT NULL,
	inline  INTEGER NOT NULL,
	PRIMARY KEY (profile, idx)
) WITHOUT ROWID;

CREATE TABLE stack_nodes (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	parent  INTEGER NOT NULL,
	frame   INTEGER NOT NULL,
	PRIMARY KEY (profile, idx)
) WITHOUT ROWID;

CREATE TABLE samples (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	t       INTEGER NOT NULL,
	seq     INTEGER NOT NULL,
	cpu     INTEGER NOT NULL,
	pid     INTEGER NOT NULL,
	tid     INTEGER NOT NULL,
	comm    INTEGER NOT NULL,
	event   INTEGER NOT NULL,
	weight  INTEGER NOT NULL,
	stack   INTEGER NOT NULL,
	PRIMARY KEY (profile, t, seq)
) WITHOUT ROWID;
