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
                    bool at_offset = false) {
  const ParseOutcome parsed = parse_sql(sql);
  REQUIRE_MESSAGE(parsed.ok, sql);
  std::vector<SqlToken> tokens;
  REQUIRE(scan_tokens(sql, tokens));
  std::vector<Edit> edits;
  for (const auto& st : parsed.statements)
    if (place_catalog_guard(tokens, st, GuardCall{5, false, false, values_cast, at_offset},
                            edits) == GuardPlacement::kNoPlace)
      return kanon::testing::kNoPlace;
  return edits.empty() ? std::string() : apply_edits(sql, edits);
}

std::string spelled(const char* expected) {
  std::string out = expected;
  const std::string call = catalog_guard_call(5, false);
  for (size_t at = out.find("@G"); at != std::string::npos; at = out.find("@G", at))
    out.replace(at, 2, call);
  return out;
}

}  // namespace

TEST_CASE("the guard goes where it gates the query each statement runs") {
  for (const auto& c : kanon::testing::guard_cases()) {
    const std::string sql = c.sql;
    CAPTURE(sql);
    const std::string got = guarded(c.sql, c.values_cast, c.at_offset);
    if (c.guarded == nullptr || c.guarded == kanon::testing::kNoPlace) {
      CHECK(got == (c.guarded ? c.guarded : ""));
      continue;
    }
    CHECK(got == spelled(c.guarded));
    // Parses, and the guard adds nothing PostgreSQL would look up by path.
    CHECK(parse_sql(got).ok);
    CHECK(kanon::testing::unqualified_names("SELECT " + catalog_guard_call(5, false)).empty());
  }
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
