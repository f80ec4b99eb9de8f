// Backslashes in string constants (rewriter/string_literals.h): plain
// constants with backslashes become the E'...' constants the session reads
// (setting off: an E prefix; on: an E prefix and doubled backslashes),
// everything else stays as it was, and the check with libpg_query's scanner
// refuses any text in which a plain constant still holds a backslash.
#include "rewriter/string_literals.h"

#include <doctest/doctest.h>

#include "rewriter/sql_parser.h"

using namespace kanon::rewriter;

TEST_CASE("string literals: plain constants with backslashes get an E prefix") {
  CHECK(escape_backslash_literals(R"(SELECT 'a\'b')", false) == R"(SELECT E'a\'b')");
  CHECK(escape_backslash_literals(R"(SELECT 'c\\d', 'plain', 'it''s')", false) ==
        R"(SELECT E'c\\d', 'plain', 'it''s')");
  // After a name (a typed constant): a space keeps the name apart.
  CHECK(escape_backslash_literals(R"(SELECT text'x\\y')", false) == R"(SELECT text E'x\\y')");
  // A constant continued after a newline keeps the first part's kind.
  CHECK(escape_backslash_literals("SELECT 'a'\n  'b\\'c'", false) == "SELECT E'a'\n  'b\\'c'");
  CHECK(escape_backslash_literals("SELECT 'a' 'b'", false) == "SELECT 'a' 'b'");
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
    CHECK(escape_backslash_literals(sql, false) == sql);
    CHECK(literals_read_alike(sql));
  }
  // 1.5e'...': PostgreSQL 15 reports trailing junk after the number; the
  // text is left alone and does not scan (denied).
  CHECK(escape_backslash_literals(R"(SELECT 1.5e'x\'y')", false) == R"(SELECT 1.5e'x\'y')");
  CHECK_FALSE(literals_read_alike(R"(SELECT 1.5e'x\'y')"));
}

TEST_CASE("string literals: the check refuses what the server would read differently") {
  CHECK(literals_read_alike(R"(SELECT E'a\'b', 'c', $$d\$$)"));
  CHECK_FALSE(literals_read_alike(R"(SELECT 'a\'b')"));
  CHECK_FALSE(literals_read_alike(R"(SELECT N'a\\b')"));
  CHECK_FALSE(literals_read_alike("SELECT 'unterminated"));
  // Text the parser cannot read either way goes on as it is (the rewriter
  // answers `syntax` and the server gives its own error from a probe).
  for (const char* bad : {R"(SELECT E'wrong: \u061')", "SELECT 'unterminated \\"}) {
    CAPTURE(std::string(bad));
    CHECK_FALSE(parse_sql(bad).ok);
    CHECK(standard_text(bad, true).value() == bad);
    CHECK(standard_text(bad, false).value() == bad);
  }
  CHECK(standard_text(R"(SELECT 'a\'b')", false).value() == R"(SELECT E'a\'b')");
  CHECK_FALSE(standard_text(R"(SELECT N'a\\b')", false).has_value());
}

TEST_CASE("string literals: a smuggled subquery is seen where the server sees it") {
  // The server (setting off) reads one constant `a' AS x, ` and then a
  // subquery of people; the standard reading hides the subquery in a constant.
  const char* smuggled = R"(SELECT 'a\' AS x, ' AS y, (SELECT ssn FROM people) AS z --')";
  const auto standard = parse_sql(smuggled);
  REQUIRE(standard.ok);
  CHECK(standard.statements.at(0).relations.empty());  // what a naive proxy would decide on
  const auto text = standard_text(smuggled, false);
  REQUIRE(text.has_value());
  const auto parsed = parse_sql(*text);
  REQUIRE(parsed.ok);
  REQUIRE(parsed.statements.at(0).relations.size() == 1);
  CHECK(parsed.statements.at(0).relations.at(0).name == "people");
  // And a statement split by a smuggled semicolon is two statements.
  const auto split = standard_text(R"(SELECT '\'; SELECT ssn FROM people; --')", false);
  REQUIRE(split.has_value());
  const auto one = parse_sql(*split);
  REQUIRE(one.ok);
  CHECK(one.statements.size() == 1);  // the server reads one constant too
}

TEST_CASE("string literals: with the setting on, backslashes are doubled in E'...'") {
  CHECK(escape_backslash_literals(R"(SELECT 'a\b', 'c\')", true) == R"(SELECT E'a\\b', E'c\\')");
  CHECK(escape_backslash_literals(R"(SELECT E'a\'b', 'plain')", true) ==
        R"(SELECT E'a\'b', 'plain')");
  CHECK(escape_backslash_literals("SELECT 'a\\'\n 'b\\c'", true) == "SELECT E'a\\\\'\n 'b\\\\c'");
  CHECK(standard_text(R"(SELECT regexp_replace(x, '\d+', ''))", true).value() ==
        R"(SELECT regexp_replace(x, E'\\d+', ''))");
  CHECK(standard_text("SELECT 'no backslash'", true).value() == "SELECT 'no backslash'");
  CHECK_FALSE(standard_text(R"(SELECT N'a\b')", true).has_value());
}

TEST_CASE("string literals: a setting kanon has not seen change cannot smuggle") {
  // The client turns the setting off and sends the next statement before the
  // server's ParameterStatus reaches kanon: kanon reads with the setting on.
  // The text it sends is read alike under both settings.
  const char* smuggled = R"(SELECT 'a\' AS x, ' AS y, (SELECT ssn FROM people) AS z --')";
  const auto text = standard_text(smuggled, true);
  REQUIRE(text.has_value());
  CHECK(*text == R"(SELECT E'a\\' AS x, ' AS y, (SELECT ssn FROM people) AS z --')");
  // Under the setting off the server reads the same tokens: the text's plain
  // constants hold no backslash, and the E'' one ends where kanon saw it end.
  CHECK(escape_backslash_literals(*text, false) == *text);
  CHECK(literals_read_alike(*text));
  const auto parsed = parse_sql(*text);
  REQUIRE(parsed.ok);
  CHECK(parsed.statements.at(0).relations.empty());  // a constant for both readers
}
