// Where the catalog guard goes (rewriter/catalog_guard.h), as text, and that
// the guarded text names nothing unqualified.
#include "rewriter/catalog_guard.h"

#include <doctest/doctest.h>

#include "tests/rewriter/catalog_guard_cases.h"
#include "tests/rewriter/qualification.h"

using namespace kanon::rewriter;

namespace {

// The text with its guards; kanon::testing::kNoPlace when a statement has
// no place for one.
std::string guarded(const std::string& sql, const std::string& values_cast = "",
                    bool at_offset = false, bool c_function = false) {
  const ParseOutcome parsed = parse_sql(sql);
  REQUIRE_MESSAGE(parsed.ok, sql);
  std::vector<SqlToken> tokens;
  REQUIRE(scan_tokens(sql, tokens));
  std::vector<Edit> edits;
  for (const auto& st : parsed.statements)
    if (place_catalog_guard(tokens, st,
                            GuardCall{5, false, false, values_cast, at_offset, c_function},
                            edits) == GuardPlacement::kNoPlace)
      return kanon::testing::kNoPlace;
  return edits.empty() ? std::string() : apply_edits(sql, edits);
}

std::string spelled(const char* expected, bool c_function = false) {
  std::string out = expected;
  const std::string call = catalog_guard_call(GuardCall{5, false, false, "", false, c_function});
  for (size_t at = out.find("@G"); at != std::string::npos; at = out.find("@G", at))
    out.replace(at, 2, call);
  return out;
}

}  // namespace

TEST_CASE("the guard goes where it gates the query each statement runs") {
  for (const bool c_function : {false, true}) {
    CAPTURE(c_function);
    for (const auto& c : kanon::testing::guard_cases()) {
      const std::string sql = c.sql;
      CAPTURE(sql);
      const std::string got = guarded(c.sql, c.values_cast, c.at_offset, c_function);
      if (c.guarded == nullptr || c.guarded == kanon::testing::kNoPlace) {
        CHECK(got == (c.guarded ? c.guarded : ""));
        continue;
      }
      CHECK(got == spelled(c.guarded, c_function));
      // Parses, and the guard adds nothing PostgreSQL would look up by path.
      CHECK(parse_sql(got).ok);
    }
  }
}

TEST_CASE("the guard's call: schema kanon's PL/pgSQL, or kanon_mask's C, always qualified") {
  CHECK(catalog_guard_call(GuardCall{5}) == "\"kanon\".\"catalog_is\"(5::pg_catalog.int8)");
  CHECK(catalog_guard_call(GuardCall{7, true}) ==
        "\"kanon\".\"catalog_stays\"(7::pg_catalog.int8)");
  CHECK(catalog_guard_call(GuardCall{5, false, false, "", false, true}) ==
        "\"kanon_mask\".\"catalog_is\"(5::pg_catalog.int8)");
  CHECK(catalog_guard_call(GuardCall{9, true, true, "", false, true}) ==
        "\"kanon_mask\".\"catalog_stays\"(9::pg_catalog.int8) AND \"kanon\".\"serial\"()");
  for (const bool hold : {false, true})
    for (const bool serial : {false, true})
      for (const bool c_function : {false, true})
        CHECK(kanon::testing::unqualified_names(
                  "SELECT " + catalog_guard_call(GuardCall{5, hold, serial, "", false, c_function}))
                  .empty());
}

TEST_CASE("WHERE CURRENT OF and statements that run no query get no guard") {
  CHECK(guarded("UPDATE t SET a = 1 WHERE CURRENT OF c").empty());
  CHECK(guarded("DELETE FROM t WHERE CURRENT OF c").empty());
  CHECK(guarded("SET search_path = public").empty());
  CHECK(guarded("CREATE VIEW v AS SELECT a FROM t").empty());
  CHECK(guarded("CREATE MATERIALIZED VIEW m AS SELECT a FROM t").empty());
}

TEST_CASE("names spelled with U& escapes and quoted names") {
  CHECK(guarded(R"(SELECT * FROM U&"peop\006Ce")") ==
        spelled(R"(SELECT * FROM U&"peop\006Ce" WHERE @G)"));
  CHECK(guarded(R"(SELECT id, stadt, U&"t\00e4tigkeit" FROM U&"b\00fcrger" ORDER BY 1)") ==
        spelled(R"(SELECT id, stadt, U&"t\00e4tigkeit" FROM U&"b\00fcrger" WHERE @G ORDER BY 1)"));
}
