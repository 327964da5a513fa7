-- 0001: the base schema. A capture is stored once at import and never
-- re-read from its text.
--
-- Every table below hangs off profiles.pk, a small integer, rather than the
-- 26-character public ID: the samples table repeats it in every row.
--
-- Stacks are a shared-prefix tree (stack_nodes: node, parent, frame) rather
-- than interned frame arrays. perf stacks share long prefixes (main → run →
-- …), so the tree stores each caller chain once and a sample refers to one
-- integer; the tree is exactly the shape the analysis code walks
-- (subsecond.Capture.Nodes), so loading a profile copies rows into slices
-- without re-interning; and a flame graph is a sum over tree nodes. Frame
-- arrays would repeat every common prefix in each distinct stack and need a
-- blob format of their own.
--
-- Samples are a WITHOUT ROWID table whose primary key is
-- (profile, t, seq): rows are clustered by time, so a time-window query
-- reads only that window's rows, with or without a CPU filter, and no
-- separate index doubles the table's size. t is nanoseconds from
-- profiles.time_base (the first timestamp of the input) so it fits six
-- bytes; seq is the sample's position in the input, which keeps samples
-- with equal times distinct and in input order.

-- +goose Up
CREATE TABLE profiles (
	pk           INTEGER PRIMARY KEY,
	id           TEXT    NOT NULL UNIQUE,
	name         TEXT    NOT NULL,
	file_name    TEXT    NOT NULL,
	sha256       TEXT    NOT NULL,
	bytes        INTEGER NOT NULL,
	uploaded_ns  INTEGER NOT NULL,
	metadata     TEXT    NOT NULL, -- JSON of subsecond.Metadata
	time_base    INTEGER NOT NULL, -- samples.t is relative to this
	start_ns     INTEGER NOT NULL,
	end_ns       INTEGER NOT NULL,
	samples      INTEGER NOT NULL,
	cpus         INTEGER NOT NULL,
	frequency_hz REAL    NOT NULL,
	warnings     INTEGER NOT NULL
);

CREATE TABLE events (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	idx     INTEGER NOT NULL, -- samples.event
	name    TEXT    NOT NULL,
	samples INTEGER NOT NULL,
	PRIMARY KEY (profile, idx)
) WITHOUT ROWID;

CREATE TABLE warnings (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	line    INTEGER NOT NULL,
	message TEXT    NOT NULL,
	PRIMARY KEY (profile, seq)
) WITHOUT ROWID;

-- strings interns symbols, DSOs, source lines and comms; idx 0 is "".
CREATE TABLE strings (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	s       TEXT    NOT NULL,
	PRIMARY KEY (profile, idx)
) WITHOUT ROWID;

CREATE TABLE frames (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	symbol  INTEGER NOT NULL, -- strings.idx
	dso     INTEGER NOT NULL, -- strings.idx
	srcline INTEGER NOT NULL, -- strings.idx
	addr    INTEGER NOT NULL, -- uint64 stored as its two's-complement int64
	kind    INTEGER NOT NULL, -- subsecond.FrameKind
	inline  INTEGER NOT NULL,
	PRIMARY KEY (profile, idx)
) WITHOUT ROWID;

-- stack_nodes is the stack prefix tree; node 0 (the empty stack) is implied
-- and not stored. parent < idx always.
CREATE TABLE stack_nodes (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,
	parent  INTEGER NOT NULL,
	frame   INTEGER NOT NULL, -- frames.idx
	PRIMARY KEY (profile, idx)
) WITHOUT ROWID;

CREATE TABLE samples (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	t       INTEGER NOT NULL, -- ns from profiles.time_base; -2^63 when the input had no time
	seq     INTEGER NOT NULL,
	cpu     INTEGER NOT NULL, -- -1 when unknown
	pid     INTEGER NOT NULL,
	tid     INTEGER NOT NULL,
	comm    INTEGER NOT NULL, -- strings.idx
	event   INTEGER NOT NULL, -- events.idx
	weight  INTEGER NOT NULL, -- period, or 1
	stack   INTEGER NOT NULL, -- stack_nodes.idx, 0 for an empty stack
	PRIMARY KEY (profile, t, seq)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE samples;
DROP TABLE stack_nodes;
DROP TABLE frames;
DROP TABLE strings;
DROP TABLE warnings;
DROP TABLE events;
DROP TABLE profiles;
