// standard_conforming_strings off (rewriter/string_literals.h): plain string
// constants with backslashes become E'...' constants, everything else stays
// as it was, and the check with libpg_query's scanner refuses any text in
// which a plain constant still holds a backslash.
#include "rewriter/string_literals.h"

#include <doctest/doctest.h>

#include "rewriter/sql_parser.h"

using namespace kanon::rewriter;

TEST_CASE("string literals: plain constants with backslashes get an E prefix") {
  CHECK(escape_backslash_literals(R"(SELECT 'a\'b')") == R"(SELECT E'a\'b')");
  CHECK(escape_backslash_literals(R"(SELECT 'c\\d', 'plain', 'it''s')") ==
        R"(SELECT E'c\\d', 'plain', 'it''s')");
  // After a name (a typed constant): a space keeps the name apart.
  CHECK(escape_backslash_literals(R"(SELECT text'x\\y')") == R"(SELECT text E'x\\y')");
  // A constant continued after a newline keeps the first part's kind.
  CHECK(escape_backslash_literals("SELECT 'a'\n  'b\\'c'") == "SELECT E'a'\n  'b\\'c'");
  CHECK(escape_backslash_literals("SELECT 'a' 'b'") == "SELECT 'a' 'b'");
}

TEST_CASE("string literals: other tokens are left alone") {
  for (const char* sql : {
           R"(SELECT E'a\'b', e'\\')",
           R"(SELECT $$a\'$$, $tag$ 'x\' $tag$)",
           R"(SELECT B'0101', X'1F', "col\""" FROM t)",
           "SELECT 1 -- it's a \\ comment\n",
           R"(/* 'a\' /* nested */ \' */ SELECT 1)",
           R"(SELECT $1, a$b FROM t WHERE c = 'no backslash')",
           R"(SELECT 1 e'x\'y')",
       }) {
    CAPTURE(std::string(sql));
    CHECK(escape_backslash_literals(sql) == sql);
    CHECK(literals_read_alike(sql));
  }
  // 1.5e'...': PostgreSQL 15 reports trailing junk after the number; the
  // text is left alone and does not scan (denied).
  CHECK(escape_backslash_literals(R"(SELECT 1.5e'x\'y')") == R"(SELECT 1.5e'x\'y')");
  CHECK_FALSE(literals_read_alike(R"(SELECT 1.5e'x\'y')"));
}

TEST_CASE("string literals: the check refuses what the server would read differently") {
  CHECK(literals_read_alike(R"(SELECT E'a\'b', 'c', $$d\$$)"));
  CHECK_FALSE(literals_read_alike(R"(SELECT 'a\'b')"));
  CHECK_FALSE(literals_read_alike(R"(SELECT N'a\'b')"));
  CHECK_FALSE(literals_read_alike("SELECT 'unterminated"));
  CHECK(standard_text(R"(SELECT 'a\'b')").value() == R"(SELECT E'a\'b')");
  CHECK_FALSE(standard_text(R"(SELECT N'a\'b')").has_value());
}

TEST_CASE("string literals: a smuggled subquery is seen where the server sees it") {
  // The server (setting off) reads one constant `a' AS x, ` and then a
  // subquery of people; the standard reading hides the subquery in a constant.
  const char* smuggled = R"(SELECT 'a\' AS x, ' AS y, (SELECT ssn FROM people) AS z --')";
  const auto standard = parse_sql(smuggled);
  REQUIRE(standard.ok);
  CHECK(standard.statements.at(0).relations.empty());  // what a naive proxy would decide on
  const auto text = standard_text(smuggled);
  REQUIRE(text.has_value());
  const auto parsed = parse_sql(*text);
  REQUIRE(parsed.ok);
  REQUIRE(parsed.statements.at(0).relations.size() == 1);
  CHECK(parsed.statements.at(0).relations.at(0).name == "people");
  // And a statement split by a smuggled semicolon is two statements.
  const auto split = standard_text(R"(SELECT '\'; SELECT ssn FROM people; --')");
  REQUIRE(split.has_value());
  const auto one = parse_sql(*split);
  REQUIRE(one.ok);
  CHECK(one.statements.size() == 1);  // the server reads one constant too
}
