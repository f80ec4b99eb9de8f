#include "policy/kanon_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <pqxx/pqxx>

namespace kanon::policy {
namespace {

// Taken for every DDL in schema kanon (here and by the catalog watch).
constexpr const char* kSchemaLock = "SELECT pg_catalog.pg_advisory_xact_lock(7306355, 1)";

}  // namespace

const std::vector<SchemaMigration>& kanon_schema_migrations() {
  static const std::vector<SchemaMigration> migrations = {
      {1,
       "the tables as kanon made them before the schema had a version",
       {
           // The release history (release_store.h), before row format 2.
           "CREATE TABLE IF NOT EXISTS kanon.releases (table_name text NOT NULL, "
           "version bigint NOT NULL, built_at timestamptz NOT NULL DEFAULT now(), "
           "baseline boolean NOT NULL, k integer NOT NULL, tree jsonb NOT NULL, "
           "rows bigint NOT NULL, released_fraction double precision NOT NULL, "
           "linked_rows bigint NOT NULL, min_candidates bigint NOT NULL, "
           "rows_below_k bigint NOT NULL, updated_rows_below_k bigint NOT NULL, "
           "held_rows bigint NOT NULL, PRIMARY KEY (table_name, version))",
           "CREATE TABLE IF NOT EXISTS kanon.release_rows (table_name text NOT NULL, "
           "key text NOT NULL, since_version bigint NOT NULL, released text[], "
           "held boolean NOT NULL DEFAULT false, PRIMARY KEY (table_name, key, since_version))",
           "CREATE TABLE IF NOT EXISTS kanon.held_keys (table_name text NOT NULL, "
           "key text NOT NULL, PRIMARY KEY (table_name, key))",
           // Shared snapshots (shared_snapshots.h).
           "CREATE TABLE IF NOT EXISTS kanon.snapshots (table_name text NOT NULL, "
           "version bigint NOT NULL, policy_hash text NOT NULL, fingerprint text NOT NULL, "
           "built_at timestamptz NOT NULL, built_by text NOT NULL, "
           "stored_at timestamptz NOT NULL DEFAULT now(), body text NOT NULL, "
           "PRIMARY KEY (table_name, version))",
           "CREATE TABLE IF NOT EXISTS kanon.snapshot_servers (replica text NOT NULL, "
           "table_name text NOT NULL, version bigint NOT NULL, "
           "since timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (replica, table_name))",
           "CREATE TABLE IF NOT EXISTS kanon.refresh_requests (id bigserial PRIMARY KEY, "
           "grp integer NOT NULL, verb text NOT NULL, table_name text NOT NULL, "
           "asked_by text NOT NULL, asked_at timestamptz NOT NULL DEFAULT now(), "
           "taken boolean NOT NULL DEFAULT false, error text)",
           // Exports (publish/exports_table.h).
           "CREATE TABLE IF NOT EXISTS kanon.exports (id bigint GENERATED ALWAYS AS IDENTITY "
           "PRIMARY KEY, exported_at timestamptz NOT NULL DEFAULT now(), source text NOT NULL, "
           "target text NOT NULL, k integer NOT NULL, min_class bigint NOT NULL, "
           "classes bigint NOT NULL, rows_in bigint NOT NULL, rows_out bigint NOT NULL, "
           "suppressed bigint NOT NULL, levels text NOT NULL, metric text NOT NULL, "
           "loss double precision NOT NULL, algorithm text NOT NULL, command text NOT NULL, "
           "report jsonb NOT NULL, json_report text, html_report text)",
           // The version; every account kanon runs as reads it.
           "CREATE TABLE IF NOT EXISTS kanon.schema_version (version integer PRIMARY KEY, "
           "summary text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), "
           "applied_by text NOT NULL DEFAULT current_user)",
           "GRANT SELECT ON kanon.schema_version TO PUBLIC",
       }},
      {2,
       "release row format 2: release histories and until_version",
       {
           "ALTER TABLE kanon.releases ADD COLUMN IF NOT EXISTS row_format integer NOT NULL "
           "DEFAULT 1, ADD COLUMN IF NOT EXISTS histories jsonb",
           "ALTER TABLE kanon.release_rows ADD COLUMN IF NOT EXISTS history bigint, "
           "ADD COLUMN IF NOT EXISTS until_version bigint",
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
  if (state.recorded > kKanonSchemaVersion) {
    plan.action = SchemaPlan::Action::kTooNew;
    return plan;
  }
  for (const auto& [table, columns] : kanon_schema_tables()) {
    const auto found = state.tables.find(table);
    if (found == state.tables.end()) {
      plan.missing.push_back("kanon." + table);
      continue;
    }
    for (const auto& column : columns)
      if (!found->second.count(column)) plan.missing.push_back("kanon." + table + "." + column);
  }
  if (!plan.missing.empty()) {
    plan.action = SchemaPlan::Action::kMigrate;
    plan.first_step = 1;
  } else if (state.recorded < kKanonSchemaVersion) {
    plan.action = SchemaPlan::Action::kMigrate;
    plan.first_step = state.recorded + 1;
  }
  return plan;
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
  if (state.tables.count("schema_version"))
    state.recorded =
        tx.exec1("SELECT pg_catalog.max(version) FROM kanon.schema_version")[0].as<int>(0);
  return state;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

[[noreturn]] void refuse_newer(int recorded) {
  throw KanonSchemaError(fmt::format(
      "kanon: schema kanon in this database is at version {}, newer than the {} this kanon "
      "knows; a newer kanon upgraded it, and an older one must not write to it: run the newer "
      "kanon (kanon.schema_version lists each version applied)",
      recorded, kKanonSchemaVersion));
}

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
  if (state.schema_exists && !create_in_schema)
    throw pqxx::insufficient_privilege(fmt::format(
        "kanon: permission denied to upgrade schema kanon from version {} to {}: it lacks {}, "
        "and the service account \"{}\" lacks CREATE on schema kanon (run kanon once as the "
        "schema's owner, or ALTER SCHEMA kanon OWNER TO \"{}\")",
        state.recorded, kKanonSchemaVersion, joined(plan.missing), account, account));

  tx.exec(kSchemaLock);
  // Another kanon may have migrated while this one waited.
  state = read_kanon_schema(tx);
  plan = plan_kanon_schema(state);
  out.found = out.version = state.recorded;
  if (plan.action == SchemaPlan::Action::kTooNew) refuse_newer(state.recorded);
  if (plan.action == SchemaPlan::Action::kNone) return out;
  out.applied = true;
  // Not IF NOT EXISTS: that needs CREATE on the database even when the
  // schema exists.
  if (!state.schema_exists) tx.exec("CREATE SCHEMA kanon");
  for (const auto& step : kanon_schema_migrations()) {
    if (step.version < plan.first_step) continue;
    try {
      for (const auto& sql : step.statements) tx.exec(sql);
    } catch (const pqxx::insufficient_privilege& e) {
      throw pqxx::insufficient_privilege(
          fmt::format("kanon: upgrading schema kanon to version {} ({}) as \"{}\": {}",
                      step.version, step.summary, account, e.what()));
    } catch (const pqxx::sql_error& e) {
      throw KanonSchemaError(
          fmt::format("kanon: upgrading schema kanon to version {} ({}) failed: {}", step.version,
                      step.summary, e.what()));
    }
    if (step.version > state.recorded)
      tx.exec_params(
          "INSERT INTO kanon.schema_version (version, summary) VALUES ($1, $2) "
          "ON CONFLICT (version) DO NOTHING",
          step.version, std::string(step.summary));
  }
  out.version = kKanonSchemaVersion;
  return out;
}

SchemaOutcome ensure_kanon_schema(pqxx::connection_base& conn) {
  pqxx::work tx(conn);
  auto out = ensure_kanon_schema(tx);
  tx.commit();
  return out;
}

}  // namespace kanon::policy
