#!/bin/sh
# Run once by the postgres image when its data volume is new (compose.yaml mounts this folder at
# /docker-entrypoint-initdb.d). As the image's superuser it makes what the service must not make
# itself (docs/security/sql-sandbox.md, "Roles"): the service's ordinary login role `cms`, its
# database `cms` owned by it, and the SQL sandbox's role `cms_stl_reader`, of which `cms` is made a
# member (the same step as `cms sandbox-role cms`). The service then runs, migrates and owns its
# schema as `cms`, never as a superuser.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_password="$CMS_DB_PASSWORD" <<'SQL'
CREATE ROLE cms LOGIN PASSWORD :'app_password' NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
CREATE DATABASE cms OWNER cms;
CREATE ROLE cms_stl_reader NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOBYPASSRLS;
GRANT cms_stl_reader TO cms;
SQL
