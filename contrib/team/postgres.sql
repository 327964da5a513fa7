-- A role and a database for Subsecond: run as the postgres superuser,
--   sudo -u postgres psql -v password="'…'" -f postgres.sql
-- Subsecond creates its tables itself (migrations run at start-up, under an
-- advisory lock, so app servers started together migrate once).
CREATE ROLE subsecond LOGIN PASSWORD :password;
CREATE DATABASE subsecond OWNER subsecond ENCODING 'UTF8';
