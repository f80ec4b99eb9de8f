// psql through kanon: restricted rows masked as `kanon tree` says, the exempt
// postgres sees raw rows, public.open_data is untouched, and the catalog
// queries behind \d, \dt and \d+ print exactly what they print directly.
#include <doctest/doctest.h>

#include "tests/clients/client_fixture.h"
#include "tests/clients/matrix_checks.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::testing;

namespace {

CommandResult psql(const Endpoint& e, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"psql", "-X", "-v", "ON_ERROR_STOP=1", "-d", libpq_conninfo(e)};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

// The query steps run one by one with psql's unaligned output.
Sections psql_sections(const Endpoint& e, const std::vector<Step>& steps) {
  Sections out;
  for (const auto& s : steps) {
    if (s.kind != "query") continue;
    const auto r = psql(e, {"-A", "-t", "-F", "\t", "-P", "null=\\N", "-c", s.sql});
    if (r.exit_code != 0) {
      out[s.name].error = "psql: " + r.err;
      continue;
    }
    std::string line;
    for (char c : r.out) {
      if (c == '\n') {
        out[s.name].rows.push_back(line);
        line.clear();
      } else {
        line += c;
      }
    }
    out[s.name];
  }
  return out;
}

std::vector<Step> query_steps(const std::vector<Step>& steps) {
  std::vector<Step> out;
  for (const auto& s : steps)
    if (s.kind == "query") out.push_back(s);
  return out;
}

}  // namespace

TEST_CASE("psql: restricted rows masked as kanon tree says, exempt rows raw, open data untouched") {
  auto& f = ClientFixture::shared();
  const auto steps = query_steps(protected_steps());
  const auto open = query_steps(open_steps());
  for (const Endpoint& e : {f.kanon("analyst"), f.kanon("kanon_scram", "scram-secret")}) {
    CAPTURE(e.user);
    const Sections got = psql_sections(e, expand(steps, f.through_kanon()));
    const std::string diff = difference(f.expected(steps, f.masked()), got);
    CHECK_MESSAGE(diff.empty(), "masked: " << diff);
    const std::string open_diff = difference(f.expected(open, f.raw()), psql_sections(e, open));
    CHECK_MESSAGE(open_diff.empty(), "open_data: " << open_diff);
  }
  const Sections exempt = psql_sections(f.kanon("postgres"), expand(steps, f.through_kanon()));
  const std::string diff = difference(f.expected(steps, f.raw()), exempt);
  CHECK_MESSAGE(diff.empty(), "exempt: " << diff);
}

TEST_CASE("psql: \\d, \\dt, \\d+ adult and \\d+ people print the same through kanon as directly") {
  auto& f = ClientFixture::shared();
  struct Case {
    std::string command, must_contain;
  };
  const Case cases[] = {
      {"\\d", "open_data"},
      {"\\dt", "people"},
      {"\\d+ adult", "marital-status"},
      {"\\d+ people", "\"people_pkey\" PRIMARY KEY, btree (id)"},
      {"\\d open_data", "numeric(8,2)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.command);
    const auto direct = psql(f.direct("analyst"), {"-c", c.command});
    const auto via = psql(f.kanon("analyst"), {"-c", c.command});
    REQUIRE_MESSAGE(direct.exit_code == 0, direct.err);
    CHECK_MESSAGE(via.exit_code == 0, via.err);
    CHECK(direct.out.find(c.must_contain) != std::string::npos);
    CHECK(via.out == direct.out);
    CHECK(via.err == direct.err);
  }
}
