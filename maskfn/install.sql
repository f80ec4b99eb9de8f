-- Installs kanon_mask.released, the C evaluator of compiled release
-- predicates (maskfn/README.md), into the current database. Run it as a
-- superuser (a C function needs one), once per database kanon protects
-- tables in with `evaluator: function`:
--
--   psql -v library=/path/to/kanon_mask.so -f maskfn/install.sql dbname
--
-- The schema is the installer's, and nobody else may create in it, so no
-- other role can put an object there that kanon's masks would call. Every
-- role may call the function: it returns only what its arguments decide.
\set ON_ERROR_STOP on
CREATE SCHEMA IF NOT EXISTS kanon_mask;
REVOKE ALL ON SCHEMA kanon_mask FROM PUBLIC;
GRANT USAGE ON SCHEMA kanon_mask TO PUBLIC;
CREATE OR REPLACE FUNCTION kanon_mask.released(pg_catalog.bytea, VARIADIC "any")
  RETURNS pg_catalog.bool
  AS :'library', 'kanon_mask_released'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION kanon_mask.released(pg_catalog.bytea, VARIADIC "any") IS
  'kanon: evaluates one compiled release predicate (maskfn/kanon_mask.c)';
-- The catalog guard in C (maskfn/catalog_guard.c): where these are
-- installed as here, kanon writes them into restricted statements instead
-- of the PL/pgSQL kanon.catalog_is and kanon.catalog_stays (they cost a new
-- backend about 1.2 ms to compile, and each statement an SPI query).
CREATE OR REPLACE FUNCTION kanon_mask.catalog_is(pg_catalog.int8)
  RETURNS pg_catalog.bool
  AS :'library', 'kanon_mask_catalog_is'
  LANGUAGE C STABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kanon_mask.catalog_stays(pg_catalog.int8)
  RETURNS pg_catalog.bool
  AS :'library', 'kanon_mask_catalog_stays'
  LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE OR REPLACE FUNCTION kanon_mask.copy_current(pg_catalog.regclass, pg_catalog.text)
  RETURNS pg_catalog.bool
  AS :'library', 'kanon_mask_copy_current'
  LANGUAGE C STABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION kanon_mask.snapshot_sees(pg_catalog.xid8, pg_catalog.text)
  RETURNS pg_catalog.bool
  AS :'library', 'kanon_mask_snapshot_sees'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION kanon_mask.catalog_is(pg_catalog.int8) IS
  'kanon: the catalog guard, true at the generation kanon decided with, else KN001';
COMMENT ON FUNCTION kanon_mask.catalog_stays(pg_catalog.int8) IS
  'kanon: the catalog guard that also holds DDL off to the end of the transaction';
COMMENT ON FUNCTION kanon_mask.copy_current(pg_catalog.regclass, pg_catalog.text) IS
  'kanon: the guard of a masked copy, true when the snapshot sees the copy, else 22P02';
COMMENT ON FUNCTION kanon_mask.snapshot_sees(pg_catalog.xid8, pg_catalog.text) IS
  'kanon: the guard of a masked view, true when the snapshot sees its refresh end, else 22P02';
