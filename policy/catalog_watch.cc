#include "policy/catalog_watch.h"

#include <pqxx/pqxx>
#include <string>

namespace kanon::policy {
namespace {

// Every failure inside is swallowed (notifying then, to be safe): an event
// trigger that raised would fail every DDL command in the database.
constexpr const char* kFunction = R"sql(
CREATE OR REPLACE FUNCTION kanon.catalog_changed() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog SET lock_timeout = 0
AS $kanon$
DECLARE
  persistent boolean;
  -- Every object the command touched is in kanon's own schemas (kanon, the
  -- masked copies' kanon_masked, and their TOAST tables): nothing a
  -- restricted statement runs reads its definition late.
  own boolean;
BEGIN
  BEGIN
    IF TG_EVENT = 'sql_drop' THEN
      SELECT bool_or(NOT d.is_temporary),
             bool_and(d.schema_name IN ('kanon', 'kanon_masked', 'pg_toast'))
        INTO persistent, own FROM pg_event_trigger_dropped_objects() d;
    ELSE
      SELECT bool_or(c.schema_name IS NULL OR c.schema_name !~ '^pg_(toast_)?temp'),
             bool_and(c.schema_name IN ('kanon', 'kanon_masked'))
        INTO persistent, own FROM pg_event_trigger_ddl_commands() c;
      -- DROP collects no commands here; sql_drop reports it.
      IF persistent IS NULL AND TG_TAG LIKE 'DROP %' THEN
        persistent := false;
      END IF;
    END IF;
  EXCEPTION WHEN OTHERS THEN
    persistent := true;
    own := false;
  END;
  IF persistent IS NOT FALSE THEN
    -- Held until this transaction ends. A restricted statement that may call
    -- a function PostgreSQL reads the body of when it first calls it holds
    -- this lock shared from its guard to its own end (kanon.catalog_stays):
    -- so this DDL commits only after every such statement ended, and one
    -- that starts meanwhile waits for it and sees the new generation. Its
    -- errors are not swallowed (a deadlock with such a statement fails one
    -- of the two): going on without it would let the statement see this DDL.
    -- kanon's own objects (a refresh's masked copy) do not take it: the
    -- copy a statement reads is locked by it, and holds masked rows only.
    IF own IS NOT TRUE THEN
      PERFORM pg_advisory_xact_lock(7306355, 3);
    END IF;
    -- Held until this transaction ends, so kanon's catalog reader (which
    -- takes the lock exclusively before reading the generation) never reads
    -- a generation whose DDL has not committed yet.
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(7306355, 2);
    EXCEPTION WHEN OTHERS THEN
      NULL;  -- a deadlock with the reader: it read the generation before this bump
    END;
    BEGIN
      PERFORM nextval('kanon.catalog_generation'::regclass);
    EXCEPTION WHEN OTHERS THEN
      NULL;  -- without the sequence every guard fails: fail closed
    END;
    BEGIN
      PERFORM pg_notify('kanon_catalog', TG_EVENT);
    EXCEPTION WHEN OTHERS THEN
      NULL;
    END;
  END IF;
END
$kanon$)sql";

// The guards kanon splices into restricted statements
// (rewriter/catalog_guard.h). Everything is schema-qualified: the caller's
// search_path is in force.
constexpr const char* kGuardFunction = R"sql(
CREATE OR REPLACE FUNCTION kanon.catalog_is(decided pg_catalog.int8) RETURNS pg_catalog.bool
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $kanon$
DECLARE
  now_at pg_catalog.int8;
BEGIN
  SELECT g.last_value INTO now_at FROM kanon.catalog_generation g;
  IF now_at OPERATOR(pg_catalog.=) decided THEN
    RETURN true;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'KN001',
    MESSAGE = pg_catalog.concat('kanon: the catalog changed (generation ', now_at,
                                ', decided under ', decided, ')');
END
$kanon$)sql";

// The same check, first taking the lock the event trigger takes exclusively
// (shared, to the end of the transaction): for statements that may call a
// function whose body PostgreSQL reads from the catalog only when it first
// calls it, so no DDL commits while they run.
constexpr const char* kHoldingGuardFunction = R"sql(
CREATE OR REPLACE FUNCTION kanon.catalog_stays(decided pg_catalog.int8) RETURNS pg_catalog.bool
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED AS $kanon$
BEGIN
  PERFORM pg_catalog.pg_advisory_xact_lock_shared(7306355, 3);
  RETURN kanon.catalog_is(decided);
END
$kanon$)sql";

// A marker restricted statements that evaluate masks carry (rewriter/
// catalog_guard.h): PARALLEL UNSAFE, so PostgreSQL plans them without
// parallel workers (each would initialise the large mask expressions again);
// IMMUTABLE `SELECT true`, so it is inlined and folded away, costing nothing
// at run time. Every other restricted statement keeps the server's parallel
// settings.
constexpr const char* kSerialFunction = R"sql(
CREATE OR REPLACE FUNCTION kanon.serial() RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL UNSAFE AS $kanon$SELECT true$kanon$)sql";

// The body of a CREATE FUNCTION above (what pg_proc.prosrc holds).
std::string body_of(const char* function) {
  const std::string text = function;
  const std::string quote = "$kanon$";
  const size_t open = text.find(quote) + quote.size();
  return text.substr(open, text.rfind(quote) - open);
}

// Whether every object install_catalog_event_trigger makes is there as it
// makes it: both functions with these bodies and settings, the sequence, the
// privileges, and both event triggers enabled.
bool installed(pqxx::work& tx) {
  const auto row = tx.exec_params1(
      "WITH f AS (SELECT p.proname, p.prosrc, p.prosecdef, p.provolatile, p.proparallel, "
      "                  p.proconfig "
      "           FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n "
      "             ON n.oid OPERATOR(pg_catalog.=) p.pronamespace "
      "           WHERE n.nspname OPERATOR(pg_catalog.=) 'kanon') "
      // The privileges are asked only of objects that exist (CASE's order).
      "SELECT CASE WHEN pg_catalog.to_regclass('kanon.catalog_generation') IS NOT NULL "
      "  AND EXISTS (SELECT 1 FROM f WHERE proname OPERATOR(pg_catalog.=) 'catalog_changed' "
      "     AND prosrc OPERATOR(pg_catalog.=) $1 AND prosecdef "
      "     AND proconfig OPERATOR(pg_catalog.=) "
      "         '{search_path=pg_catalog,lock_timeout=0}'::pg_catalog.text[]) "
      "  AND (SELECT pg_catalog.count(*) FROM f "
      "       WHERE (proname, prosrc, proparallel::pg_catalog.text) IN "
      "             (('catalog_is', $2, 's'), ('catalog_stays', $3, 'r')) "
      "         AND NOT prosecdef AND provolatile OPERATOR(pg_catalog.=) 's' "
      "         AND proconfig IS NULL) "
      "      OPERATOR(pg_catalog.=) 2 "
      "  AND EXISTS (SELECT 1 FROM f WHERE proname OPERATOR(pg_catalog.=) 'serial' "
      "     AND prosrc OPERATOR(pg_catalog.=) 'SELECT true' AND NOT prosecdef "
      "     AND provolatile OPERATOR(pg_catalog.=) 'i' "
      "     AND proparallel OPERATOR(pg_catalog.=) 'u' AND proconfig IS NULL) "
      "  AND (SELECT pg_catalog.count(*) FROM pg_catalog.pg_event_trigger e "
      "       WHERE e.evtname IN ('kanon_catalog_ddl', 'kanon_catalog_drop') "
      "         AND e.evtenabled OPERATOR(pg_catalog.=) 'O') OPERATOR(pg_catalog.=) 2 "
      "THEN pg_catalog.has_schema_privilege('public', 'kanon', 'USAGE') "
      "  AND pg_catalog.has_sequence_privilege('public', 'kanon.catalog_generation', 'SELECT') "
      "  AND pg_catalog.has_function_privilege('public', "
      "        'kanon.catalog_is(pg_catalog.int8)', 'EXECUTE') "
      "  AND pg_catalog.has_function_privilege('public', "
      "        'kanon.catalog_stays(pg_catalog.int8)', 'EXECUTE') "
      "  AND pg_catalog.has_function_privilege('public', 'kanon.serial()', 'EXECUTE') "
      "  AND NOT pg_catalog.has_function_privilege('public', 'kanon.catalog_changed()', "
      "        'EXECUTE') "
      "ELSE false END",
      body_of(kFunction), body_of(kGuardFunction), body_of(kHoldingGuardFunction));
  return row[0].as<bool>(false);
}

}  // namespace

const std::string& catalog_guard_body() {
  static const std::string body = body_of(kGuardFunction);
  return body;
}

const std::string& catalog_holding_guard_body() {
  static const std::string body = body_of(kHoldingGuardFunction);
  return body;
}

bool install_catalog_event_trigger(pqxx::connection_base& conn, std::string* error) {
  try {
    pqxx::work tx(conn);
    const auto super = tx.exec(
        "SELECT r.rolsuper FROM pg_catalog.pg_roles r "
        "WHERE r.rolname OPERATOR(pg_catalog.=) pg_catalog.current_user()");
    if (super.empty() || std::string(super[0][0].c_str()) != "t") {
      if (error)
        *error =
            "the service account is not a superuser: no event trigger, the catalog is "
            "re-read only at policy refreshes";
      return false;
    }
    // Two kanon instances starting together must not both create the triggers.
    tx.exec("SELECT pg_catalog.pg_advisory_xact_lock(7306355, 1)");
    // Every DDL statement advances the generation and so fails the guard of
    // every restricted statement running: nothing is done when all is in place.
    if (installed(tx)) {
      tx.commit();
      return true;
    }
    tx.exec("CREATE SCHEMA IF NOT EXISTS kanon");
    tx.exec("CREATE SEQUENCE IF NOT EXISTS kanon.catalog_generation");
    // last_value reads alike before and after the first nextval: start past it.
    tx.exec(
        "SELECT pg_catalog.nextval('kanon.catalog_generation'::pg_catalog.regclass) "
        "FROM kanon.catalog_generation WHERE NOT is_called");
    tx.exec(kFunction);
    tx.exec(kGuardFunction);
    tx.exec(kHoldingGuardFunction);
    tx.exec(kSerialFunction);
    // Restricted logins run the guard; the generation is no secret.
    tx.exec("GRANT USAGE ON SCHEMA kanon TO PUBLIC");
    tx.exec("GRANT SELECT ON SEQUENCE kanon.catalog_generation TO PUBLIC");
    tx.exec("GRANT EXECUTE ON FUNCTION kanon.catalog_is(pg_catalog.int8) TO PUBLIC");
    tx.exec("GRANT EXECUTE ON FUNCTION kanon.catalog_stays(pg_catalog.int8) TO PUBLIC");
    tx.exec("GRANT EXECUTE ON FUNCTION kanon.serial() TO PUBLIC");
    // SECURITY DEFINER: nobody but its event triggers runs it.
    tx.exec("REVOKE EXECUTE ON FUNCTION kanon.catalog_changed() FROM PUBLIC");
    const auto existing = tx.exec(
        "SELECT evtname FROM pg_catalog.pg_event_trigger "
        "WHERE evtname IN ('kanon_catalog_ddl', 'kanon_catalog_drop')");
    bool ddl = false, drop = false;
    for (const auto& r : existing) {
      const std::string name = r[0].c_str();
      ddl = ddl || name == "kanon_catalog_ddl";
      drop = drop || name == "kanon_catalog_drop";
    }
    if (!ddl)
      tx.exec(
          "CREATE EVENT TRIGGER kanon_catalog_ddl ON ddl_command_end "
          "EXECUTE FUNCTION kanon.catalog_changed()");
    if (!drop)
      tx.exec(
          "CREATE EVENT TRIGGER kanon_catalog_drop ON sql_drop "
          "EXECUTE FUNCTION kanon.catalog_changed()");
    tx.exec("ALTER EVENT TRIGGER kanon_catalog_ddl ENABLE");
    tx.exec("ALTER EVENT TRIGGER kanon_catalog_drop ENABLE");
    tx.commit();
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

}  // namespace kanon::policy
