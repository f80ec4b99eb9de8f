#include "rewriter/sql_parser.h"

#include <doctest/doctest.h>

using kanon::rewriter::parse_sql;

TEST_CASE("parse_sql counts the statements of a multi-statement string") {
  const auto out = parse_sql("SELECT 1; SELECT * FROM adult WHERE age = 39");
  REQUIRE(out.ok);
  CHECK(out.statement_count == 2);
}

TEST_CASE("parse_sql reports PostgreSQL's error and its position") {
  const auto out = parse_sql("SELECT FROM WHERE");
  CHECK_FALSE(out.ok);
  CHECK(out.error.find("syntax error") != std::string::npos);
  CHECK(out.error_offset == 13);
}
