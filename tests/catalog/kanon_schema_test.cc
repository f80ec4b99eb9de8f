// The migrations list of schema kanon and what ensure_kanon_schema plans for
// each state of the catalog, without a server.
#include "catalog/kanon_schema.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace kanon::catalog;

namespace {

KanonSchemaState current_state() {
  KanonSchemaState s;
  s.schema_exists = true;
  s.recorded = kKanonSchemaVersion;
  s.tables = kanon_schema_tables();
  return s;
}

// The tables as an earlier kanon made them, with no version recorded.
KanonSchemaState version_one_state() {
  KanonSchemaState s = current_state();
  s.recorded = 0;
  s.tables.erase("schema_version");
  s.tables.at("releases").erase("row_format");
  s.tables.at("releases").erase("histories");
  s.tables.at("release_rows").erase("history");
  s.tables.at("release_rows").erase("until_version");
  return s;
}

}  // namespace

TEST_CASE("migrations are numbered 1.. to the current version and create every table") {
  const auto& steps = kanon_schema_migrations();
  REQUIRE(!steps.empty());
  for (size_t i = 0; i < steps.size(); ++i) {
    CHECK(steps[i].version == static_cast<int>(i) + 1);
    CHECK(!steps[i].statements.empty());
  }
  CHECK(steps.back().version == kKanonSchemaVersion);
  for (const auto& [table, columns] : kanon_schema_tables()) {
    CAPTURE(table);
    CHECK(!columns.empty());
    const std::string create = "CREATE TABLE IF NOT EXISTS kanon." + table + " (";
    const bool created = std::any_of(steps.begin(), steps.end(), [&](const SchemaMigration& m) {
      return std::any_of(m.statements.begin(), m.statements.end(),
                         [&](const SchemaStatement& st) { return st.sql.rfind(create, 0) == 0; });
    });
    CHECK(created);
  }
  // Every statement is idempotent (version 0 may hold any subset of the
  // tables), names schema kanon explicitly, and adds tables and columns of
  // the current version.
  for (const auto& m : steps)
    for (const auto& st : m.statements) {
      const std::string& sql = st.sql;
      CAPTURE(sql);
      for (const auto& add : st.adds) {
        CAPTURE(add);
        const auto dot = add.find('.', 6);
        const auto table = kanon_schema_tables().find(add.substr(6, dot - 6));
        REQUIRE(table != kanon_schema_tables().end());
        if (dot != std::string::npos) CHECK(table->second.count(add.substr(dot + 1)) == 1);
      }
      const bool idempotent =
          sql.find("IF NOT EXISTS") != std::string::npos || sql.rfind("GRANT ", 0) == 0;
      CHECK(idempotent);
      CHECK(sql.find("kanon.") != std::string::npos);
    }
}

namespace {

// Every statement of every migration, in order.
std::vector<std::string> all_statements() {
  std::vector<std::string> out;
  for (const auto& m : kanon_schema_migrations())
    for (const auto& st : m.statements) out.push_back(st.sql);
  return out;
}

bool starts(const std::string& sql, const std::string& prefix) {
  return sql.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("plan: current and complete -> nothing") {
  const auto plan = plan_kanon_schema(current_state());
  CHECK(plan.action == SchemaPlan::Action::kNone);
  CHECK(plan.missing.empty());
  CHECK(plan.statements.empty());
}

TEST_CASE("plan: no schema -> every step, every table missing") {
  const auto plan = plan_kanon_schema(KanonSchemaState{});
  CHECK(plan.action == SchemaPlan::Action::kMigrate);
  CHECK(plan.statements == all_statements());
  CHECK(plan.missing.size() == kanon_schema_tables().size());
  CHECK(std::find(plan.missing.begin(), plan.missing.end(), "kanon.releases") !=
        plan.missing.end());
}

TEST_CASE("plan: an earlier kanon's tables -> every step; the columns it lacks are named") {
  const auto plan = plan_kanon_schema(version_one_state());
  CHECK(plan.action == SchemaPlan::Action::kMigrate);
  // No CREATE TABLE of a table that is there.
  REQUIRE(plan.statements.size() == 4);
  CHECK(starts(plan.statements[0], "CREATE TABLE IF NOT EXISTS kanon.schema_version "));
  CHECK(starts(plan.statements[1], "GRANT SELECT ON kanon.schema_version"));
  CHECK(starts(plan.statements[2], "ALTER TABLE kanon.releases ADD COLUMN"));
  CHECK(starts(plan.statements[3], "ALTER TABLE kanon.release_rows ADD COLUMN"));
  CHECK(plan.missing ==
        std::vector<std::string>{"kanon.release_rows.history", "kanon.release_rows.until_version",
                                 "kanon.releases.histories", "kanon.releases.row_format",
                                 "kanon.schema_version"});
}

TEST_CASE("plan: complete tables at an older recorded version -> only the record") {
  auto state = current_state();
  state.recorded = 1;
  const auto plan = plan_kanon_schema(state);
  CHECK(plan.action == SchemaPlan::Action::kMigrate);
  CHECK(plan.statements.empty());
  CHECK(plan.missing.empty());
}

TEST_CASE("plan: the current tables with no version recorded -> kanon.schema_version only") {
  auto state = current_state();
  state.recorded = 0;
  state.tables.erase("schema_version");
  const auto plan = plan_kanon_schema(state);
  CHECK(plan.action == SchemaPlan::Action::kMigrate);
  CHECK(plan.missing == std::vector<std::string>{"kanon.schema_version"});
  REQUIRE(plan.statements.size() == 2);
  CHECK(starts(plan.statements[0], "CREATE TABLE IF NOT EXISTS kanon.schema_version "));
  CHECK(starts(plan.statements[1], "GRANT SELECT ON kanon.schema_version"));
}

TEST_CASE("plan: a missing table is made in version 1's form, then given later columns") {
  auto state = current_state();
  state.tables.erase("releases");
  const auto plan = plan_kanon_schema(state);
  CHECK(plan.missing == std::vector<std::string>{"kanon.releases"});
  REQUIRE(plan.statements.size() == 2);
  CHECK(starts(plan.statements[0], "CREATE TABLE IF NOT EXISTS kanon.releases "));
  CHECK(starts(plan.statements[1], "ALTER TABLE kanon.releases ADD COLUMN"));
}

TEST_CASE("plan: current version with a column dropped by hand -> the statement adding it") {
  auto state = current_state();
  state.tables.at("releases").erase("histories");
  const auto plan = plan_kanon_schema(state);
  CHECK(plan.action == SchemaPlan::Action::kMigrate);
  REQUIRE(plan.statements.size() == 1);
  CHECK(starts(plan.statements[0], "ALTER TABLE kanon.releases ADD COLUMN"));
  CHECK(plan.missing == std::vector<std::string>{"kanon.releases.histories"});
}

TEST_CASE("plan: a newer version is refused, whatever the tables") {
  auto state = current_state();
  state.recorded = kKanonSchemaVersion + 1;
  CHECK(plan_kanon_schema(state).action == SchemaPlan::Action::kTooNew);
  state.tables.clear();
  CHECK(plan_kanon_schema(state).action == SchemaPlan::Action::kTooNew);
}

TEST_CASE("the start-up check's sentence for each state") {
  const auto report = [](const KanonSchemaState& s) {
    return describe_kanon_schema(s, plan_kanon_schema(s));
  };
  const auto current = report(current_state());
  CHECK(current.sentence ==
        "schema kanon is at version " + std::to_string(kKanonSchemaVersion) + ", this kanon's");
  CHECK_FALSE(current.too_new);
  const auto none = report(KanonSchemaState{});
  CHECK(none.sentence.starts_with("no schema kanon yet: version " +
                                  std::to_string(kKanonSchemaVersion) + " is created"));
  CHECK_FALSE(none.too_new);
  const auto older = report(version_one_state());
  CHECK(older.sentence.starts_with("schema kanon is at version 0; this kanon migrates it"));
  CHECK(older.sentence.find("missing: kanon.release_rows.history") != std::string::npos);
  CHECK_FALSE(older.too_new);
  auto newer_state = current_state();
  newer_state.recorded = kKanonSchemaVersion + 1;
  const auto newer = report(newer_state);
  CHECK(newer.too_new);
  CHECK(newer.sentence.find("newer than this kanon's " + std::to_string(kKanonSchemaVersion)) !=
        std::string::npos);
}
