// Differential test of the masks against a physically masked oracle: a
// table holding, row for row, what the release of public.people shows
// (`kanon tree --format sql`, the masks compiled from the same data and k),
// created directly in PostgreSQL. Randomly generated statements (a fixed
// seed, printed) run through kanon as the restricted analyst on people, and
// directly on the oracle with people's name replaced by it: both answers
// must be the same rows, with either protocol. Whatever the statement does
// with the quasi-identifiers (filters, groups, joins, aggregates,
// subqueries, CTEs), it sees only the released values. A second case mixes
// in session settings (set alike in the oracle's session), PREPARE/EXECUTE
// and an administrator's DDL between statements: then a statement may fail
// with 40001 (the catalog changed under it) or be denied as a stale
// prepared statement, and every other answer is still the oracle's.
#include <doctest/doctest.h>

#include <fstream>
#include <pqxx/pqxx>
#include <random>
#include <string>
#include <vector>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/process.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"

using namespace kanon::testing;

namespace {

const char* const kOracle = "public.people_oracle";

struct Fixture {
  Fixture() {
    auto& pg = PgSandbox::shared();
    const std::string config = scratch_path("kanon-differential.yaml");
    std::ofstream(config) << "backend: {host: 127.0.0.1, port: " << pg.port()
                          << ", user: postgres, dbname: postgres}\n"
                             "policies: ["
                          << source_dir() << "/config/policies/people.yaml]\n";
    const auto masks = run_command({kanon_executable(), "tree", "--config", config, "--table",
                                    "public.people", "--format", "sql"});
    REQUIRE_MESSAGE(masks.exit_code == 0, masks.err);
    std::string select = masks.out;
    while (!select.empty() && (select.back() == '\n' || select.back() == ';')) select.pop_back();
    pg.psql(std::string("DROP TABLE IF EXISTS ") + kOracle + "; CREATE TABLE " + kOracle + " AS " +
            select);
    proxy = std::make_unique<KanonProxy>(
        pg.port(), "policies: [" + source_dir() + "/config/policies/people.yaml]\n");
  }
  std::unique_ptr<KanonProxy> proxy;
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// Random statements over a table named @T (people, or the oracle).
class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  std::string statement() {
    switch (pick(8)) {
      case 0:
        return "SELECT " + columns() + " FROM @T" + where() + " ORDER BY 1, 2, 3";
      case 1: {
        const std::string c = column();
        return "SELECT " + c + ", count(*) FROM @T" + where() + " GROUP BY " + c +
               " ORDER BY 1 NULLS FIRST, 2";
      }
      case 2:
        return "SELECT DISTINCT " + columns() + " FROM @T" + where() + " ORDER BY 1, 2, 3";
      case 3:
        return "SELECT s.* FROM (SELECT " + columns() + " FROM @T" + where() +
               ") AS s ORDER BY 1, 2, 3";
      case 4:
        return "WITH w AS (SELECT * FROM @T" + where() + ") SELECT " + columns() +
               " FROM w ORDER BY 1, 2, 3";
      case 5: {
        const std::string c = column();
        return "SELECT a.id, a." + c + ", b." + c + " FROM @T a JOIN @T b ON b.id = a.id + " +
               std::to_string(1 + pick(3)) + " ORDER BY 1";
      }
      case 6: {
        const std::string c = column();
        return "SELECT count(*), count(" + c + "), count(DISTINCT " + c + "), string_agg(" + c +
               ", ',' ORDER BY " + c + "), min(" + c + "), max(" + c + ") FROM @T" + where();
      }
      default:
        return "SELECT id, " + column() + " FROM @T WHERE " + column() + " IN (SELECT " + column() +
               " FROM @T" + where() + ") ORDER BY 1";
    }
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::string column() {
    static const char* const kColumns[] = {"occupation", "city",       "state", "name", "ssn",
                                           "diagnosis",  "occupation", "city",  "state"};
    return kColumns[pick(std::size(kColumns))];
  }
  std::string columns() {
    // Three, so ORDER BY 1, 2, 3 always names one; id keeps rows apart.
    return "id, " + column() + ", " + column();
  }
  std::string value() {
    static const char* const kValues[] = {"Farmer",     "Accountant", "Lawyer", "Hamlet",
                                          "Washington", "OH",         "DC",     "Columbus",
                                          "***",        "Ada Quill",  "x"};
    return kValues[pick(std::size(kValues))];
  }
  std::string where() {
    const std::string c = column();
    // Integer constants compared with id: texts of one shape share a
    // decision (rewriter/literal_shape.h), each run with its own constants.
    const auto n = [&] { return std::to_string(1 + pick(12)); };
    switch (pick(10)) {
      case 8:
        return " WHERE id >= " + n() + " AND " + c + " IS NOT NULL";
      case 9:
        return " WHERE id IN (" + n() + ", " + n() + ")";
      case 0:
        return "";
      case 1:
        return " WHERE " + c + " = '" + value() + "'";
      case 2:
        return " WHERE " + c + " IS NULL";
      case 3:
        return " WHERE " + c + " IS NOT NULL";
      case 4:
        return " WHERE " + c + " LIKE '" + value().substr(0, 2) + "%'";
      case 5:
        return " WHERE " + c + " IN ('" + value() + "', '" + value() + "')";
      case 6:
        return " WHERE coalesce(" + c + ", '?') <> '" + value() + "' AND id > " +
               std::to_string(pick(6));
      default:
        return " WHERE " + c + " = '" + value() + "' OR " + column() + " IS NULL";
    }
  }

  std::mt19937 rng_;
};

std::string on(const std::string& sql, const std::string& table) {
  std::string out = sql;
  for (size_t at = out.find("@T"); at != std::string::npos; at = out.find("@T", at))
    out.replace(at, 2, table);
  return out;
}

}  // namespace

TEST_CASE("random statements through kanon answer exactly what the masked oracle holds") {
  auto& f = fixture();
  const uint32_t seed = 20261124;
  MESSAGE("seed " << seed);
  Generator gen(seed);
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  pqxx::connection direct(PgSandbox::shared().conninfo("postgres"));
  // The oracle is no copy of the raw table: the test would pass vacuously.
  REQUIRE(run(direct, on("SELECT count(*) FROM @T WHERE city IS NULL", kOracle)).rows != "0|\n");
  REQUIRE(run(direct, "SELECT count(*) FROM public.people WHERE city IS NULL").rows == "0|\n");
  int compared = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string sql = gen.statement();
    const bool extended = i % 2 == 1;
    CAPTURE(sql);
    CAPTURE(extended);
    const Outcome oracle = run(direct, on(sql, kOracle), extended);
    REQUIRE_MESSAGE(oracle.sqlstate.empty(), oracle.message);
    const Outcome masked = run(analyst, on(sql, "people"), extended);
    CHECK_MESSAGE(masked.sqlstate.empty(), masked.sqlstate << " " << masked.message);
    CHECK(masked.rows == oracle.rows);
    ++compared;
  }
  CHECK(compared == 400);
}

namespace {

// A setting as a restricted session may change it, in one of the ways it can.
std::string random_setting(std::mt19937& rng) {
  static const char* const kSettings[] = {
      "SET search_path = pg_catalog, public",
      "SELECT pg_catalog.set_config('search_path', 'public', false)",
      "SET DateStyle = 'German, DMY'",
      "SET TimeZone = 'Pacific/Chatham'",
      "SET extra_float_digits = 3",
      "SET IntervalStyle = 'sql_standard'",
      "SET transform_null_equals = on",
      "SET standard_conforming_strings = off",
      "RESET ALL",
      "BEGIN; SET LOCAL search_path = public; ROLLBACK",
  };
  return kSettings[std::uniform_int_distribution<size_t>(0, std::size(kSettings) - 1)(rng)];
}

}  // namespace

TEST_CASE(
    "random sessions with settings, PREPARE/EXECUTE and DDL: the oracle's rows or a retryable "
    "error") {
  auto& f = fixture();
  const uint32_t seed = 1124;
  MESSAGE("seed " << seed);
  Generator gen(seed);
  std::mt19937 rng(seed);
  const auto coin = [&](int in) { return std::uniform_int_distribution<int>(0, in - 1)(rng) == 0; };
  pqxx::connection admin(PgSandbox::shared().conninfo("postgres"));
  int compared = 0, retryable = 0;
  // Whether an administrator's DDL ran: only then may a statement fail.
  // (Not only right after it: the statement after a simple Query that kanon
  // sent again transparently, e.g. an EXECUTE after a DDL, was seen failing
  // with 40001 while the generation stood still: decided on the catalog
  // from before the DDL. Fail closed, but to be explained: issue 26 note.)
  bool ddl = false;
  for (int session = 0; session < 12; ++session) {
    CAPTURE(session);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    pqxx::connection direct(PgSandbox::shared().conninfo("postgres"));
    int prepared = 0;
    for (int i = 0; i < 30; ++i) {
      if (coin(4)) {
        const std::string setting = random_setting(rng);
        CAPTURE(setting);
        REQUIRE(run(analyst, setting).sqlstate.empty());
        REQUIRE(run(direct, setting).sqlstate.empty());
      }
      if (coin(6)) {  // an administrator's DDL, unrelated to what is read
        pqxx::nontransaction(admin).exec(
            "CREATE OR REPLACE VIEW public.differential_noise AS SELECT " + std::to_string(i) +
            " AS n");
        ddl = true;
      }
      const std::string sql = gen.statement();
      const bool extended = coin(2);
      CAPTURE(sql);
      CAPTURE(extended);
      Outcome masked, oracle;
      if (coin(3)) {  // prepared, then executed (maybe after a DDL)
        std::string name = "p";
        name += std::to_string(prepared++);
        REQUIRE(run(direct, "PREPARE " + name + " AS " + on(sql, kOracle)).sqlstate.empty());
        const Outcome made = run(analyst, "PREPARE " + name + " AS " + on(sql, "people"));
        CHECK_MESSAGE(made.sqlstate.empty(), made.message);
        if (coin(2)) {
          pqxx::nontransaction(admin).exec(
              "CREATE OR REPLACE VIEW public.differential_noise AS "
              "SELECT -1 AS n");
          ddl = true;
        }
        oracle = run(direct, "EXECUTE " + name, extended);
        masked = run(analyst, "EXECUTE " + name, extended);
      } else {
        oracle = run(direct, on(sql, kOracle), extended);
        masked = run(analyst, on(sql, "people"), extended);
      }
      REQUIRE_MESSAGE(oracle.sqlstate.empty(), oracle.message);
      if (!masked.sqlstate.empty()) {
        // Only after a DDL may a statement fail, and only so.
        CHECK_MESSAGE(ddl, masked.sqlstate << " " << masked.message);
        CHECK_MESSAGE((masked.sqlstate == "40001" || masked.sqlstate == "42501"),
                      masked.sqlstate << " " << masked.message);
        CHECK(masked.rows.empty());
        ++retryable;
        continue;
      }
      CHECK(masked.rows == oracle.rows);
      ++compared;
    }
  }
  MESSAGE("compared " << compared << ", failed after a DDL " << retryable);
  // How many fail depends on how soon kanon catches up with each DDL (a busy
  // machine: more); the answers that came are what is checked.
  CHECK(compared > 0);
}
