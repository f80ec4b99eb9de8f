// The lexer pieces the splicer relies on: identifiers decoded like PostgreSQL
// decodes them, dotted names, words before a position, parentheses.
#include "rewriter/sql_lexer.h"

#include <doctest/doctest.h>

using namespace kanon::rewriter;

TEST_CASE("identifiers: plain ones fold to lower case, quoted ones keep case") {
  NameToken t;
  REQUIRE(read_identifier("PeOpLe x", 0, t));
  CHECK(t.value == "people");
  CHECK(t.end == 6);
  REQUIRE(read_identifier("\"PeO\"\"ple\" x", 0, t));
  CHECK(t.value == "PeO\"ple");
  CHECK(t.end == 10);
  CHECK_FALSE(read_identifier("\"\"", 0, t));  // zero-length identifier
  CHECK_FALSE(read_identifier("\"open", 0, t));
  CHECK_FALSE(read_identifier("1abc", 0, t));
}

TEST_CASE("identifiers: U&\"...\" escapes, with and without UESCAPE") {
  NameToken t;
  REQUIRE(read_identifier("U&\"p\\0065ople\"", 0, t));
  CHECK(t.value == "people");
  REQUIRE(read_identifier("u&\"d!+000061ta\" UESCAPE '!' rest", 0, t));
  CHECK(t.value == "data");
  CHECK(std::string_view("u&\"d!+000061ta\" UESCAPE '!' rest").substr(t.end) == " rest");
  REQUIRE(read_identifier("U&\"\\00e9t\\00E9\"", 0, t));
  CHECK(t.value == "\xC3\xA9t\xC3\xA9");
  CHECK_FALSE(read_identifier("U&\"\\zzzz\"", 0, t));
}

TEST_CASE("identifiers are truncated to 63 bytes like NAMEDATALEN") {
  NameToken t;
  const std::string longname(70, 'a');
  REQUIRE(read_identifier(longname, 0, t));
  CHECK(t.value.size() == 63);
}

TEST_CASE("dotted names allow space and comments around the dots") {
  const auto parts = read_dotted_name("public /* c */ . \"People\" AS p", 0, 3, false);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].value == "public");
  CHECK(parts[1].value == "People");
  const auto star = read_dotted_name("s.t.*", 0, 3, true);
  REQUIRE(star.size() == 3);
  CHECK(star[2].value == "*");
}

TEST_CASE("skip_space handles nested block comments and line comments") {
  const std::string_view s = "/* a /* b */ c */ -- line\n  x";
  CHECK(s[skip_space(s, 0)] == 'x');
}

TEST_CASE("word_before and matching_paren") {
  size_t begin = 0;
  CHECK(word_before("FROM ONLY  people", 11, begin) == "only");
  CHECK(begin == 5);
  const std::string_view s = "(a, \")\", 'x)') rest";
  CHECK(matching_paren(s, 0) == 14);
}
