// pgbench through kanon in its three query modes (simple, extended,
// prepared) with a custom script on people and adult. The script itself
// asserts that people's direct identifiers come back masked (it divides by
// zero otherwise), so a run passes only with every transaction completed,
// none failed, and every row it looked at masked.
#include <doctest/doctest.h>

#include <fstream>

#include "tests/clients/client_fixture.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;

namespace {

const char* const kScript = R"(\set id random(1, 11)
SELECT (name IS NULL AND ssn = '***')::int AS masked, occupation FROM people WHERE id = :id \gset
\if :masked = 0
SELECT 1 / 0 AS direct_identifiers_came_back_unmasked;
\endif
\set age random(17, 90)
SELECT count(*) AS n FROM adult WHERE age = :age AND sex = 'Female';
SELECT count(*) FROM open_data WHERE id <= :id;
)";

constexpr int kClients = 2;
constexpr int kTransactionsPerClient = 15;

std::string script_path() {
  static const std::string path = [] {
    const std::string path = scratch_path("people_adult.sql");
    std::ofstream(path) << kScript;
    return path;
  }();
  return path;
}

CommandResult pgbench(const Endpoint& e, const std::string& mode) {
  REQUIRE_MESSAGE(!find_program("pgbench").empty(),
                  "pgbench is not installed (postgresql-15, scripts/install-deps.sh)");
  return run_command({"pgbench", "-n", "-h", e.host, "-p", std::to_string(e.port), "-U", e.user,
                      "-c", std::to_string(kClients), "-j", std::to_string(kClients), "-t",
                      std::to_string(kTransactionsPerClient), "-M", mode, "-f", script_path(),
                      e.dbname});
}

}  // namespace

TEST_CASE("pgbench simple, extended and prepared through kanon: all transactions, none failed") {
  auto& f = ClientFixture::shared();
  const int total = kClients * kTransactionsPerClient;
  for (const std::string mode : {"simple", "extended", "prepared"}) {
    CAPTURE(mode);
    const auto r = pgbench(f.kanon("analyst"), mode);
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("query mode: " + mode) != std::string::npos);
    CHECK_MESSAGE(r.out.find("number of transactions actually processed: " + std::to_string(total) +
                             "/" + std::to_string(total)) != std::string::npos,
                  r.out);
    CHECK_MESSAGE(r.out.find("number of failed transactions: 0 (0.000%)") != std::string::npos,
                  r.out);
    CHECK(r.err.find("division by zero") == std::string::npos);
  }
}

TEST_CASE("the pgbench script's assertion fails on raw rows (exempt postgres)") {
  auto& f = ClientFixture::shared();
  const auto r = pgbench(f.kanon("postgres"), "prepared");
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(r.err.find("division by zero") != std::string::npos, r.err);
}
