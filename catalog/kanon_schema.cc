#include "catalog/kanon_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <pqxx/pqxx>

#include "base/text.h"
#include "catalog/schema_trust.h"

namespace kanon::catalog {
namespace {

[[noreturn]] void refuse_untrusted(const std::vector<std::string>& findings) {
  throw KanonSchemaError(schema_distrust_error(kKanonSchema, findings));
}

[[noreturn]] void refuse_newer(int recorded) {
  throw KanonSchemaError(fmt::format(
      "kanon: schema kanon in this database is at version {}, newer than the {} this kanon "
      "knows; a newer kanon upgraded it, and an older one must not write to it: run the newer "
      "kanon (kanon.schema_version lists each version applied)",
      recorded, kKanonSchemaVersion));
}

// Taken for every DDL in schema kanon (here and by the catalog watch).
constexpr const char* kSchemaLock = "SELECT pg_catalog.pg_advisory_xact_lock(7306355, 1)";

}  // namespace

const std::vector<SchemaMigration>& kanon_schema_migrations() {
  static const std::vector<SchemaMigration> migrations = {
      {1,
       "the tables as kanon made them before the schema had a version",
       {
           // The release history (release_store.h), before row format 2.
           {"CREATE TABLE IF NOT EXISTS kanon.releases (table_name text NOT NULL, "
            "version bigint NOT NULL, built_at timestamptz NOT NULL DEFAULT now(), "
            "baseline boolean NOT NULL, k integer NOT NULL, tree jsonb NOT NULL, "
            "rows bigint NOT NULL, released_fraction double precision NOT NULL, "
            "linked_rows bigint NOT NULL, min_candidates bigint NOT NULL, "
            "rows_below_k bigint NOT NULL, updated_rows_below_k bigint NOT NULL, "
            "held_rows bigint NOT NULL, PRIMARY KEY (table_name, version))",
            {"kanon.releases"}},
           {"CREATE TABLE IF NOT EXISTS kanon.release_rows (table_name text NOT NULL, "
            "key text NOT NULL, since_version bigint NOT NULL, released text[], "
            "held boolean NOT NULL DEFAULT false, PRIMARY KEY (table_name, key, since_version))",
            {"kanon.release_rows"}},
           {"CREATE TABLE IF NOT EXISTS kanon.held_keys (table_name text NOT NULL, "
            "key text NOT NULL, PRIMARY KEY (table_name, key))",
            {"kanon.held_keys"}},
           // Shared snapshots (shared_snapshots.h).
           {"CREATE TABLE IF NOT EXISTS kanon.snapshots (table_name text NOT NULL, "
            "version bigint NOT NULL, policy_hash text NOT NULL, fingerprint text NOT NULL, "
            "built_at timestamptz NOT NULL, built_by text NOT NULL, "
            "stored_at timestamptz NOT NULL DEFAULT now(), body text NOT NULL, "
            "PRIMARY KEY (table_name, version))",
            {"kanon.snapshots"}},
           {"CREATE TABLE IF NOT EXISTS kanon.snapshot_servers (replica text NOT NULL, "
            "table_name text NOT NULL, version bigint NOT NULL, "
            "since timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (replica, table_name))",
            {"kanon.snapshot_servers"}},
           {"CREATE TABLE IF NOT EXISTS kanon.refresh_requests (id bigserial PRIMARY KEY, "
            "grp integer NOT NULL, verb text NOT NULL, table_name text NOT NULL, "
            "asked_by text NOT NULL, asked_at timestamptz NOT NULL DEFAULT now(), "
            "taken boolean NOT NULL DEFAULT false, error text)",
            {"kanon.refresh_requests"}},
           // Exports (publish/exports_table.h).
           {"CREATE TABLE IF NOT EXISTS kanon.exports (id bigint GENERATED ALWAYS AS IDENTITY "
            "PRIMARY KEY, exported_at timestamptz NOT NULL DEFAULT now(), source text NOT NULL, "
            "target text NOT NULL, k integer NOT NULL, min_class bigint NOT NULL, "
            "classes bigint NOT NULL, rows_in bigint NOT NULL, rows_out bigint NOT NULL, "
            "suppressed bigint NOT NULL, levels text NOT NULL, metric text NOT NULL, "
            "loss double precision NOT NULL, algorithm text NOT NULL, command text NOT NULL, "
            "report jsonb NOT NULL, json_report text, html_report text)",
            {"kanon.exports"}},
           // The version; every account kanon runs as reads it.
           {"CREATE TABLE IF NOT EXISTS kanon.schema_version (version integer PRIMARY KEY, "
            "summary text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), "
            "applied_by text NOT NULL DEFAULT current_user)",
            {"kanon.schema_version"}},
           {"GRANT SELECT ON kanon.schema_version TO PUBLIC", {"kanon.schema_version"}},
       }},
      {2,
       "release row format 2: release histories and until_version",
       {
           {"ALTER TABLE kanon.releases ADD COLUMN IF NOT EXISTS row_format integer NOT NULL "
            "DEFAULT 1, ADD COLUMN IF NOT EXISTS histories jsonb",
            {"kanon.releases.row_format", "kanon.releases.histories"}},
           {"ALTER TABLE kanon.release_rows ADD COLUMN IF NOT EXISTS history bigint, "
            "ADD COLUMN IF NOT EXISTS until_version bigint",
            {"kanon.release_rows.history", "kanon.release_rows.until_version"}},
       }},
  };
  return migrations;
}

const std::map<std::string, std::set<std::string>>& kanon_schema_tables() {
  static const std::map<std::string, std::set<std::string>> tables = {
      {"releases",
       {"table_name", "version", "built_at", "baseline", "k", "tree", "rows", "released_fraction",
        "linked_rows", "min_candidates", "rows_below_k", "updated_rows_below_k", "held_rows",
        "row_format", "histories"}},
      {"release_rows",
       {"table_name", "key", "since_version", "released", "held", "history", "until_version"}},
      {"held_keys", {"table_name", "key"}},
      {"snapshots",
       {"table_name", "version", "policy_hash", "fingerprint", "built_at", "built_by", "stored_at",
        "body"}},
      {"snapshot_servers", {"replica", "table_name", "version", "since"}},
      {"refresh_requests",
       {"id", "grp", "verb", "table_name", "asked_by", "asked_at", "taken", "error"}},
      {"exports",
       {"id", "exported_at", "source", "target", "k", "min_class", "classes", "rows_in", "rows_out",
        "suppressed", "levels", "metric", "loss", "algorithm", "command", "report", "json_report",
        "html_report"}},
      {"schema_version", {"version", "summary", "applied_at", "applied_by"}},
  };
  return tables;
}

SchemaPlan plan_kanon_schema(const KanonSchemaState& state) {
  SchemaPlan plan;
  if (!state.distrust.empty()) {
    plan.action = SchemaPlan::Action::kUntrusted;
    return plan;
  }
  if (state.recorded > kKanonSchemaVersion) {
    plan.action = SchemaPlan::Action::kTooNew;
    return plan;
  }
  // What is absent: every missing table with each of its columns.
  std::set<std::string> absent;
  for (const auto& [table, columns] : kanon_schema_tables()) {
    const std::string name = "kanon." + table;
    const auto found = state.tables.find(table);
    if (found == state.tables.end()) {
      plan.missing.push_back(name);
      absent.insert(name);
      for (const auto& column : columns) absent.insert(name + "." + column);
      continue;
    }
    for (const auto& column : columns)
      if (!found->second.count(column)) {
        plan.missing.push_back(name + "." + column);
        absent.insert(name + "." + column);
      }
  }
  for (const auto& step : kanon_schema_migrations())
    for (const auto& statement : step.statements) {
      const bool needed =
          statement.adds.empty()
              ? step.version > state.recorded
              : std::any_of(statement.adds.begin(), statement.adds.end(),
                            [&](const std::string& add) { return absent.count(add) > 0; });
      if (needed) plan.statements.push_back(statement.sql);
    }
  if (!plan.statements.empty() || state.recorded < kKanonSchemaVersion)
    plan.action = SchemaPlan::Action::kMigrate;
  return plan;
}

void check_kanon_schema_version(pqxx::transaction_base& tx) {
  if (const auto findings = schema_distrust(tx, kKanonSchema); !findings.empty())
    refuse_untrusted(findings);
  if (tx.exec("SELECT pg_catalog.to_regclass('kanon.schema_version') IS NULL")[0][0].as<bool>())
    return;
  const int recorded =
      tx.exec("SELECT coalesce(max(version), 0) FROM kanon.schema_version")[0][0].as<int>();
  if (recorded > kKanonSchemaVersion) refuse_newer(recorded);
}

SchemaReport describe_kanon_schema(const KanonSchemaState& state, const SchemaPlan& plan) {
  switch (plan.action) {
    case SchemaPlan::Action::kUntrusted:
      return {fmt::format("schema kanon is not kanon's to trust ({}): this kanon will not use it "
                          "(release histories, shared snapshots and exports fail, so tables "
                          "with a row key are not served, and there is no catalog guard); "
                          "drop it or give it and everything in it to the service account",
                          base::join(state.distrust, "; ")),
              true};
    case SchemaPlan::Action::kTooNew:
      return {fmt::format("schema kanon is at version {}, newer than this kanon's {}: this kanon "
                          "will not write it (release histories, shared snapshots and exports "
                          "fail, so tables with a row key are not served); run the newer kanon",
                          state.recorded, kKanonSchemaVersion),
              true};
    case SchemaPlan::Action::kMigrate:
      if (!state.schema_exists)
        return {fmt::format("no schema kanon yet: version {} is created at the first write "
                            "(a release history, a shared snapshot or an export)",
                            kKanonSchemaVersion),
                false};
      return {
          fmt::format("schema kanon is at version {}; this kanon migrates it to version {} "
                      "at the first write{}",
                      state.recorded, kKanonSchemaVersion,
                      plan.missing.empty() ? std::string(" (only the version is to be recorded)")
                                           : " (missing: " + base::join(plan.missing) + ")"),
          false};
    case SchemaPlan::Action::kNone:
      break;
  }
  return {fmt::format("schema kanon is at version {}, this kanon's", state.recorded), false};
}

KanonSchemaState read_kanon_schema(pqxx::transaction_base& tx) {
  KanonSchemaState state;
  // pg_catalog only: readable without any privilege on schema kanon.
  const auto rows = tx.exec(
      "SELECT c.relname, a.attname FROM pg_catalog.pg_namespace n "
      "LEFT JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) n.oid "
      "  AND c.relkind IN ('r', 'p') "
      "LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid "
      "  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped "
      "WHERE n.nspname OPERATOR(pg_catalog.=) 'kanon'");
  for (const auto& r : rows) {
    state.schema_exists = true;
    if (r[0].is_null()) continue;
    auto& columns = state.tables[r[0].c_str()];
    if (!r[1].is_null()) columns.insert(r[1].c_str());
  }
  if (!state.schema_exists) return state;
  state.distrust = schema_distrust(tx, kKanonSchema);
  if (state.distrust.empty() && state.tables.count("schema_version"))
    state.recorded =
        tx.exec1("SELECT pg_catalog.max(version) FROM kanon.schema_version")[0].as<int>(0);
  return state;
}

namespace {

// Whether every table and column of the current version but
// kanon.schema_version is there.
bool only_version_missing(const SchemaPlan& plan) {
  return std::all_of(plan.missing.begin(), plan.missing.end(),
                     [](const std::string& m) { return m.rfind("kanon.schema_version", 0) == 0; });
}

}  // namespace

SchemaOutcome ensure_kanon_schema(pqxx::transaction_base& tx) {
  SchemaOutcome out;
  KanonSchemaState state = read_kanon_schema(tx);
  SchemaPlan plan = plan_kanon_schema(state);
  out.found = out.version = state.recorded;
  if (plan.action == SchemaPlan::Action::kUntrusted) refuse_untrusted(state.distrust);
  if (plan.action == SchemaPlan::Action::kTooNew) refuse_newer(state.recorded);
  if (plan.action == SchemaPlan::Action::kNone) return out;

  const auto rights = tx.exec1(
      "SELECT current_user, pg_catalog.current_database(), "
      "pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE'), "
      "CASE WHEN pg_catalog.to_regnamespace('kanon') IS NOT NULL "
      "  THEN pg_catalog.has_schema_privilege('kanon', 'CREATE') ELSE false END");
  const std::string account = rights[0].c_str(), database = rights[1].c_str();
  const bool create_schema = rights[2].as<bool>(false);
  const bool create_in_schema = rights[3].as<bool>(false);
  // Tables given to the account without the right to create in the schema
  // (kanon works with them): not recorded, no DDL.
  if (state.schema_exists && !create_in_schema && state.recorded == 0 &&
      only_version_missing(plan)) {
    out.note = fmt::format(
        "schema kanon has every table of version {} but no version recorded, and the service "
        "account \"{}\" may not create kanon.schema_version: run kanon once as the schema's "
        "owner to record it",
        kKanonSchemaVersion, account);
    return out;
  }
  if (!state.schema_exists && !create_schema)
    throw pqxx::insufficient_privilege(fmt::format(
        "kanon: permission denied to create schema kanon: it does not exist and the service "
        "account \"{0}\" lacks CREATE on database \"{1}\" (CREATE SCHEMA kanon AUTHORIZATION "
        "\"{0}\", or GRANT CREATE ON DATABASE \"{1}\" TO \"{0}\")",
        account, database));
  if (state.schema_exists && !create_in_schema && !plan.statements.empty())
    throw pqxx::insufficient_privilege(fmt::format(
        "kanon: permission denied to upgrade schema kanon from version {} to {}: it lacks {}, "
        "and the service account \"{}\" lacks CREATE on schema kanon (run kanon once as the "
        "schema's owner, or ALTER SCHEMA kanon OWNER TO \"{}\")",
        state.recorded, kKanonSchemaVersion, base::join(plan.missing), account, account));

  tx.exec(kSchemaLock);
  // Another kanon may have migrated while this one waited.
  state = read_kanon_schema(tx);
  plan = plan_kanon_schema(state);
  out.found = out.version = state.recorded;
  if (plan.action == SchemaPlan::Action::kUntrusted) refuse_untrusted(state.distrust);
  if (plan.action == SchemaPlan::Action::kTooNew) refuse_newer(state.recorded);
  if (plan.action == SchemaPlan::Action::kNone) return out;
  out.applied = true;
  // Not IF NOT EXISTS: that needs CREATE on the database even when the
  // schema exists.
  if (!state.schema_exists) tx.exec("CREATE SCHEMA kanon");
  for (const auto& sql : plan.statements) {
    try {
      tx.exec(sql);
    } catch (const pqxx::insufficient_privilege& e) {
      throw pqxx::insufficient_privilege(
          fmt::format("kanon: upgrading schema kanon from version {} to {} as \"{}\": {}",
                      state.recorded, kKanonSchemaVersion, account, e.what()));
    } catch (const pqxx::sql_error& e) {
      throw KanonSchemaError(
          fmt::format("kanon: upgrading schema kanon from version {} to {} failed: {}",
                      state.recorded, kKanonSchemaVersion, e.what()));
    }
  }
  for (const auto& step : kanon_schema_migrations())
    if (step.version > state.recorded)
      tx.exec_params(
          "INSERT INTO kanon.schema_version (version, summary) VALUES ($1, $2) "
          "ON CONFLICT (version) DO NOTHING",
          step.version, std::string(step.summary));
  out.version = kKanonSchemaVersion;
  return out;
}

SchemaOutcome ensure_kanon_schema(pqxx::connection_base& conn) {
  pqxx::work tx(conn);
  auto out = ensure_kanon_schema(tx);
  tx.commit();
  return out;
}

// The catalog watch's objects (catalog_watch.h).
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

// Whether every object create_catalog_watch makes is there as it makes it: both functions with
// these bodies and settings, the sequence, the privileges, and both event triggers enabled.
bool watch_installed(pqxx::transaction_base& tx) {
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

const std::string& catalog_changed_body() {
  static const std::string body = body_of(kFunction);
  return body;
}

const std::string& catalog_holding_guard_body() {
  static const std::string body = body_of(kHoldingGuardFunction);
  return body;
}

bool catalog_watch_in_place(pqxx::transaction_base& tx) {
  // Objects in a schema someone else controls are not in place, however
  // they read: create_catalog_watch then refuses the schema.
  return schema_distrust(tx, kKanonSchema).empty() && watch_installed(tx);
}

void create_catalog_watch(pqxx::transaction_base& tx) {
  if (tx.exec1("SELECT pg_catalog.to_regnamespace('kanon') IS NULL")[0].as<bool>())
    tx.exec("CREATE SCHEMA kanon");
  else if (const auto findings = schema_distrust(tx, kKanonSchema); !findings.empty())
    refuse_untrusted(findings);
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
}

}  // namespace kanon::catalog
