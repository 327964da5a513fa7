-- 0003: most events sample at a fixed period (cpu-clock at -F 49, or a
-- fixed -c count), so every samples row used to repeat the same four-byte
-- weight. The event's usual period (that of its first sample) now lives
-- here, and a sample whose weight equals it stores 0, which SQLite writes
-- in no bytes at all. Rows written before this migration keep explicit
-- weights, which are never 0, so they read back unchanged.
--
-- From this version on, samples.seq (described in 0001 as the sample's
-- position in the input) is only what keeps equal times distinct and in
-- input order: nearly always 0, so it too costs no bytes. The key and its
-- order are unchanged, so older rows need no rewrite.

-- +goose Up
ALTER TABLE events ADD COLUMN period INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE events DROP COLUMN period;
