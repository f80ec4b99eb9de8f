// The drivers of the real-client matrix through kanon (no TLS): libpqxx,
// psycopg2, node-postgres and pgJDBC. Each logs in as analyst (trust),
// kanon_md5 and kanon_scram (restricted) and postgres (exempt); restricted
// rows must equal `kanon tree`'s masks row for row, exempt rows the raw
// table, and the unprotected public.open_data what the same driver reads
// directly.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/clients/client_fixture.h"
#include "tests/clients/matrix_checks.h"

using namespace kanon::testing;

namespace {

size_t count_column(const Section& s, size_t column, const std::string& value) {
  size_t n = 0;
  for (const auto& row : s.rows) {
    size_t start = 0;
    for (size_t i = 0; i < column; ++i) start = row.find('\t', start) + 1;
    if (row.substr(start, row.find('\t', start) - start) == value) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("the expected values are masked: kanon tree's SELECT differs from the raw table") {
  auto& f = ClientFixture::shared();
  const auto masked = f.expected(protected_steps(), f.masked());
  const auto raw = f.expected(protected_steps(), f.raw());
  const Section& m = masked.at("people_all");
  const Section& r = raw.at("people_all");
  REQUIRE(m.error.empty());
  REQUIRE(m.rows.size() == 11);
  REQUIRE(r.rows.size() == 11);
  CHECK(count_column(m, 1, "\\N") == 11);  // name: NULL
  CHECK(count_column(m, 2, "***") == 11);  // ssn: constant
  CHECK(count_column(r, 1, "\\N") == 0);
  // The seed's cohorts: occupation released for 5 rows, city for 4, state for 6.
  CHECK(count_column(m, 3, "\\N") == 6);
  CHECK(count_column(m, 4, "\\N") == 7);
  CHECK(count_column(m, 5, "\\N") == 5);
  CHECK(count_column(m, 6, "\\N") == 0);  // diagnosis is not protected
  const Section& a = masked.at("adult_all");
  REQUIRE(a.rows.size() == 30162);
  CHECK(a.rows != raw.at("adult_all").rows);
  CHECK(masked.at("adult_where_age").rows.size() < raw.at("adult_where_age").rows.size());
}

TEST_CASE("libpqxx through kanon") {
  check_driver(ClientFixture::shared(), Driver::libpqxx);
}

TEST_CASE("psycopg2 through kanon") {
  check_driver(ClientFixture::shared(), Driver::psycopg2);
}

TEST_CASE("node-postgres through kanon") {
  check_driver(ClientFixture::shared(), Driver::node);
}

TEST_CASE("pgJDBC through kanon") {
  check_driver(ClientFixture::shared(), Driver::jdbc);
}

TEST_CASE("pgJDBC DatabaseMetaData.getTables/getColumns are the same through kanon") {
  auto& f = ClientFixture::shared();
  const std::vector<Step> steps = {
      {"tables", "tables", "public", {}},
      {"columns", "people_columns", "public\tpeople", {}},
      {"columns", "adult_columns", "public\tadult", {}},
      {"columns", "open_columns", "public\topen_data", {}},
  };
  const Sections direct = run_driver(Driver::jdbc, f.direct("analyst"), steps);
  const Sections via = run_driver(Driver::jdbc, f.kanon("analyst"), steps);
  const std::string diff = difference(direct, via);
  CHECK_MESSAGE(diff.empty(), diff);
  const auto& tables = via.at("tables").rows;
  for (const std::string t : {"adult", "open_data", "people"}) {
    CAPTURE(t);
    CHECK(std::find(tables.begin(), tables.end(), std::string("public\t") + t + "\tTABLE") !=
          tables.end());
  }
  const auto& people = via.at("people_columns").rows;
  REQUIRE(people.size() == 7);
  CHECK(people[0].rfind("people\tid\t1\tint4\t", 0) == 0);
  CHECK(people[3].rfind("people\toccupation\t4\ttext\t", 0) == 0);
  CHECK(via.at("adult_columns").rows.size() == 10);
  CHECK(via.at("adult_columns").rows[4].rfind("adult\tmarital-status\t5\ttext\t", 0) == 0);
}
