// The golden cases against a real PostgreSQL (the sandbox with the demo
// data): policies built from the live tables with the real compiled masks,
// every expected text checked again with those masks, and every output that
// is not a denial executed — it must be valid SQL and no cell of its result
// may hold a value that exists only in the raw tables (never in the masked
// ones).
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <chrono>
#include <fstream>
#include <map>
#include <pqxx/pqxx>
#include <set>
#include <sstream>

#include "policy/policy_file.h"
#include "policy/sql_text.h"
#include "policy/table_snapshot.h"
#include "rewriter/rewriter.h"
#include "store/materializer.h"
#include "store/snapshot_build.h"
#include "tests/rewriter/golden_env.h"
#include "tests/rewriter/golden_file.h"
#include "tests/rewriter/qualification.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon;
using kanon::testing::GoldenEnv;
using kanon::testing::PgSandbox;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

policy::TablePolicy load_policy(const std::string& name) {
  return policy::load_policy_file(testing::source_dir() + "/config/policies/" + name + ".yaml")
      .at(0);
}

std::set<std::string> distinct_cells(pqxx::connection& conn, const std::string& select) {
  pqxx::nontransaction tx(conn);
  std::set<std::string> out;
  for (const auto& row : tx.exec(select))
    for (const auto& f : row)
      if (!f.is_null()) out.insert(f.c_str());
  return out;
}

// Values present in the raw table but in no cell of its masked form.
void add_raw_only(pqxx::connection& conn, const policy::TableSnapshot& snap,
                  std::set<std::string>& forbidden) {
  const std::string table = snap.info.schema + "." + snap.info.table;
  const auto raw = distinct_cells(conn, "SELECT * FROM " + table);
  const auto masked = distinct_cells(conn, "SELECT " + snap.masks.select_list() + " FROM " + table);
  for (const auto& v : raw)
    if (!masked.count(v)) forbidden.insert(v);
}

struct PgEnvs {
  std::map<std::string, GoldenEnv> envs;
  std::set<std::string> forbidden;
};

// The golden tables, created once per process in the shared sandbox.
PgSandbox& golden_sandbox() {
  auto& pg = PgSandbox::shared();
  static const bool created = [&] {
    pg.psql(read_file(testing::golden_dir() + "/setup.sql"));
    return true;
  }();
  (void)created;
  return pg;
}

PgEnvs build_envs() {
  auto& pg = golden_sandbox();
  pqxx::connection conn(pg.conninfo());
  auto people_policy = load_policy("people");
  auto hr_policy = people_policy;
  hr_policy.schema = "hr";
  const auto people = store::build_table_snapshot(conn, people_policy);
  const auto adult = store::build_table_snapshot(conn, load_policy("adult"));
  const auto hr = store::build_table_snapshot(conn, hr_policy);
  policy::TablePolicy visits_policy;
  visits_policy.schema = "public";
  visits_policy.table = "visits";
  visits_policy.k = 2;
  visits_policy.quasi_identifiers = {"city", "state"};
  visits_policy.quasi_identifier_refs.resize(2);
  const auto visits = store::build_table_snapshot(conn, visits_policy);
  REQUIRE(visits->info.children ==
          std::vector<std::string>{"public.visits_east", "public.visits_west"});
  auto people_copy = std::make_shared<policy::TableSnapshot>(*people);
  people_copy->policy.mode = policy::EnforcementMode::kMaterialized;
  people_copy->materialized_name = store::materialize(conn, *people_copy);

  PgEnvs out;
  auto make = [&](const std::string& name) {
    GoldenEnv env;
    env.snapshot.version = 1;
    env.snapshot.tables["public.adult"] = adult;
    env.snapshot.tables["public.visits"] = visits;
    env.listed = {"public.people", "public.adult", "public.visits"};
    if (name == "default") env.snapshot.tables["public.people"] = people;
    if (name == "materialized") env.snapshot.tables["public.people"] = people_copy;
    if (name == "unbuilt") env.snapshot.errors["public.people"] = "connection refused";
    if (name == "two-schemas") {
      env.snapshot.tables["public.people"] = people;
      env.snapshot.tables["hr.people"] = hr;
      env.listed.push_back("hr.people");
    }
    out.envs.emplace(name, std::move(env));
  };
  for (const char* n : {"default", "materialized", "unbuilt", "listed-only", "two-schemas"})
    make(n);
  for (const auto& snap : {people, adult, hr, visits}) add_raw_only(conn, *snap, out.forbidden);
  return out;
}

// Runs `script` (one simple Query, several statements allowed) and returns
// every result as text: rows with fields separated by '|', COPY data as sent.
// Throws with the server's message on an error.
std::string run_script(PGconn* conn, const std::string& script) {
  if (!PQsendQuery(conn, script.c_str())) throw std::runtime_error(PQerrorMessage(conn));
  std::string out, error;
  while (PGresult* res = PQgetResult(conn)) {
    switch (PQresultStatus(res)) {
      case PGRES_TUPLES_OK:
        for (int r = 0; r < PQntuples(res); ++r) {
          for (int f = 0; f < PQnfields(res); ++f) {
            if (f) out += '|';
            if (!PQgetisnull(res, r, f)) out += PQgetvalue(res, r, f);
          }
          out += '\n';
        }
        break;
      case PGRES_COPY_OUT: {
        char* buf = nullptr;
        int n = 0;
        while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
          for (int i = 0; i < n; ++i) out += buf[i] == '\t' || buf[i] == ',' ? '|' : buf[i];
          PQfreemem(buf);
        }
        break;
      }
      case PGRES_COPY_IN:
        PQputCopyEnd(conn, nullptr);
        break;
      case PGRES_FATAL_ERROR:
        if (error.empty()) error = PQresultErrorMessage(res);
        break;
      default:
        break;
    }
    PQclear(res);
  }
  if (!error.empty()) throw std::runtime_error(error);
  return out;
}

std::vector<std::string> cells_of(const std::string& psql_output) {
  std::vector<std::string> cells;
  std::string cell;
  for (char c : psql_output) {
    if (c == '|' || c == '\n') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  if (!cell.empty()) cells.push_back(cell);
  return cells;
}

}  // namespace

TEST_CASE("every golden output runs on PostgreSQL and returns only masked values") {
  const auto t0 = std::chrono::steady_clock::now();
  const PgEnvs pg_envs = build_envs();
  MESSAGE("policies built in "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
  REQUIRE(pg_envs.forbidden.count("Ada Quill") == 1);  // names are never released
  REQUIRE(pg_envs.forbidden.count("100-00-0012") == 1);
  REQUIRE(pg_envs.forbidden.count("Reno") == 1);  // a partition's raw value
  const auto cases = testing::load_golden_cases(testing::golden_dir());
  size_t executed = 0;
  PGconn* conn = PQconnectdb(PgSandbox::shared().conninfo().c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  for (const auto& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.line);
    CAPTURE(c.name);
    const GoldenEnv& env = pg_envs.envs.at(c.env);
    rewriter::Rewriter rw(0);
    rw.set_listed_tables(env.listed);
    const auto r = rw.rewrite(c.input, env.snapshot, rewriter::PlanContext{c.search_path, false});
    CAPTURE(r.message);
    if (c.expect == "rewritten") {
      REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
      const std::string want =
          testing::expand_macros(c.output, [&](const std::string& kind, const std::string& table) {
            return testing::env_macro(env, kind, table);
          });
      CHECK(r.sql == want);
    } else if (c.expect == "pass") {
      CHECK(r.verdict == rewriter::Verdict::kPass);
    } else {
      CHECK(r.verdict == rewriter::Verdict::kDenied);
      CHECK(r.rule == (c.expect == "syntax" ? "syntax" : c.rule));
      continue;
    }
    if (!c.exec) continue;
    const std::string sql = r.verdict == rewriter::Verdict::kRewritten ? r.sql : c.input;
    std::string output;
    try {
      // A fresh session state per case: no transaction, prepared statement
      // or cursor left over from the previous one.
      run_script(conn, "ROLLBACK");
      run_script(conn, "DISCARD ALL");
      run_script(conn, "SET search_path = " + c.search_path);
      output = run_script(conn, sql);
    } catch (const std::exception& e) {
      FAIL_CHECK("PostgreSQL rejected the output: " << std::string(e.what()) << "\n"
                                                    << sql.substr(0, 600));
      continue;
    }
    std::string leaked;
    for (const auto& cell : cells_of(output))
      if (pg_envs.forbidden.count(cell)) leaked += "[" + cell + "] ";
    CHECK_MESSAGE(leaked.empty(), "raw values in the result: " << leaked);
    ++executed;
  }
  PQfinish(conn);
  MESSAGE(executed << " golden outputs executed");
  CHECK(executed >= 100);
}

TEST_CASE("masks built from the real catalog are schema-qualified") {
  // Every form, from the demo tables' own column types (text, integer,
  // varchar(n), ...) as read_table_info reads them: nothing in the masks may
  // resolve through a search_path.
  pqxx::connection conn(golden_sandbox().conninfo());
  for (const char* name : {"people", "adult"}) {
    const auto policy = load_policy(name);
    for (const auto form : {policy::PredicateForm::kNestedCase, policy::PredicateForm::kFlatCase,
                            policy::PredicateForm::kFlatValue, policy::PredicateForm::kSwitchCase,
                            policy::PredicateForm::kCostBased}) {
      store::BuildOptions options;
      options.form = form;
      options.history = false;
      const auto snap = store::build_table_snapshot(conn, policy, options);
      const std::string sql = "SELECT " + snap->masks.select_list() + " FROM " +
                              policy::qualified_name(policy.schema, policy.table);
      CAPTURE(name);
      CAPTURE(sql.substr(0, 2000));
      const auto found = testing::unqualified_names(sql);
      std::string text;
      for (const auto& f : found) text += f + "; ";
      CHECK_MESSAGE(found.empty(), text);
      CHECK(sql.find("OPERATOR(pg_catalog.=)") != std::string::npos);
    }
  }
}
