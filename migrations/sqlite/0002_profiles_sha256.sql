-- 0002: importing the same bytes twice must return the existing profile.
-- The import looks a finished capture's SHA-256 up before committing; this
-- index makes that a lookup rather than a scan of every profile, and its
-- uniqueness means no two imports (even from two processes sharing the
-- file) can ever store the same content twice. An import in progress holds
-- a unique placeholder until its hash is known.

-- +goose Up
CREATE UNIQUE INDEX profiles_sha256 ON profiles (sha256);

-- +goose Down
DROP INDEX profiles_sha256;
