-- 0006: samples as chunks. A profile's samples are stored one row per
-- second of the capture (chunks), each holding that second's samples
-- column by column in one compressed blob, about 5 bytes a sample instead
-- of the ~30 of a samples row; its interned strings, frames and stack
-- nodes are stored as a few compressed segments instead of a row each.
-- The encodings are the store package's (store/chunk.go, store/tables.go).
--
-- Profiles stored by earlier versions are converted by the program, not
-- here, one transaction per profile, before 0007 drops the old tables: a
-- profile without chunks is one still to convert.

-- +goose Up
CREATE TABLE chunks (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	second  INTEGER NOT NULL, -- floor(t / 1 s) of the chunk's samples
	seq     INTEGER NOT NULL, -- 0, then 1, 2, … for samples of the second read later
	samples INTEGER NOT NULL,
	summary BLOB    NOT NULL, -- per-CPU and per-comm counts, read without the samples
	data    BLOB    NOT NULL, -- last, so that reading summary alone skips its pages
	PRIMARY KEY (profile, second, seq)
);

CREATE TABLE segments (
	profile INTEGER NOT NULL REFERENCES profiles (pk) ON DELETE CASCADE,
	kind    INTEGER NOT NULL, -- 1 strings, 2 frames, 3 stack nodes
	seq     INTEGER NOT NULL,
	data    BLOB    NOT NULL,
	PRIMARY KEY (profile, kind, seq)
);

-- comms lists the profile's command names, which chunk summaries index.
ALTER TABLE profiles ADD COLUMN comms BLOB NOT NULL DEFAULT x'';

-- +goose Down
ALTER TABLE profiles DROP COLUMN comms;
DROP TABLE segments;
DROP TABLE chunks;
