-- A role and a database for Subsecond (contrib/team/README.md): run as the
-- postgres superuser, with the role's password,
--
--   PASSWORD=$(openssl rand -hex 24)
--   sudo -u postgres psql -v ON_ERROR_STOP=1 -v password="$PASSWORD" < postgres.sql
--
-- Both are called subsecond unless -v role=… or -v db=… says otherwise.
-- Subsecond creates its tables itself (migrations run at start-up, under an
-- advisory lock, so app servers started together migrate once).
\set ON_ERROR_STOP on
\if :{?password}
\else
DO $$ BEGIN RAISE EXCEPTION 'postgres.sql needs the role''s password: psql -v password=… (contrib/team/README.md)'; END $$;
\endif
\if :{?role}
\else
\set role subsecond
\endif
\if :{?db}
\else
\set db subsecond
\endif
CREATE ROLE :"role" LOGIN PASSWORD :'password';
-- template0: template1 may have another encoding (SQL_ASCII in a C-locale
-- cluster), and a copy of it could not be UTF8.
CREATE DATABASE :"db" OWNER :"role" TEMPLATE template0 ENCODING 'UTF8';
