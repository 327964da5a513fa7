-- 0010: the profile list reads one page of profiles rows and nothing else.
-- A profile's row carries a summary of its events (how many, and the one
-- with most samples, the first of them on a tie), so that a list entry
-- needs no events rows: a capture may hold 65,535 event names. Profiles
-- stored before are summarised from their events. The index serves the
-- list's order, newest first, a page after a cursor.

-- +goose Up
ALTER TABLE profiles ADD COLUMN event_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE profiles ADD COLUMN top_event TEXT NOT NULL DEFAULT '';
ALTER TABLE profiles ADD COLUMN top_samples BIGINT NOT NULL DEFAULT 0;
UPDATE profiles SET
	event_count = (SELECT count(*) FROM events WHERE events.profile = profiles.pk),
	top_event = COALESCE((SELECT name FROM events WHERE events.profile = profiles.pk ORDER BY samples DESC, idx LIMIT 1), ''),
	top_samples = COALESCE((SELECT samples FROM events WHERE events.profile = profiles.pk ORDER BY samples DESC, idx LIMIT 1), 0);
CREATE INDEX profiles_uploaded ON profiles (uploaded_ns, pk);

-- +goose Down
DROP INDEX profiles_uploaded;
ALTER TABLE profiles DROP COLUMN top_samples;
ALTER TABLE profiles DROP COLUMN top_event;
ALTER TABLE profiles DROP COLUMN event_count;
