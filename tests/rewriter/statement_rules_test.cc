// The rules table as the planner asks it (check_rules): what it denies by
// itself, in which scope, and in which order.
#include "rewriter/statement_rules.h"

#include <doctest/doctest.h>

#include <string>

using namespace kanon::rewriter;

namespace {

RulesVerdict verdict(const std::string& sql, RulesScope scope) {
  const auto parsed = parse_sql(sql);
  REQUIRE_MESSAGE(parsed.ok, sql);
  REQUIRE(parsed.statements.size() == 1);
  return check_rules(parsed.statements.front(), scope);
}

std::string rule_of(const std::string& sql, RulesScope scope) {
  const auto v = verdict(sql, scope);
  return v.denied ? std::string(v.denied->id) + ": " + v.object : "allowed";
}

}  // namespace

TEST_CASE("a session's statement: denied kinds, denied functions, COPY to a file") {
  const auto s = RulesScope::kStatement;
  CHECK(rule_of("SELECT * FROM t", s) == "allowed");
  CHECK(verdict("SELECT * FROM t", s).cls == StatementClass::kQuery);
  CHECK(rule_of("DO $$ BEGIN END $$", s) == std::string(rules::kOpaqueCode.id) + ": DO");
  CHECK(rule_of("SELECT pg_read_file('/etc/passwd')", s) ==
        std::string(rules::kServerFileFunction.id) + ": pg_read_file");
  CHECK(rule_of("COPY t TO '/tmp/x'", s) == std::string(rules::kCopyFile.id) + ": COPY");
  CHECK(rule_of("COPY t TO STDOUT", s) == "allowed");
  // The kind is decided before the functions in it.
  CHECK(verdict("DO $$ BEGIN PERFORM pg_read_file('x'); END $$", s).denied == &rules::kOpaqueCode);
}

TEST_CASE("code of a login that reads nothing protected: only denied functions") {
  const auto s = RulesScope::kUnprivilegedCode;
  CHECK(rule_of("DO $$ BEGIN END $$", s) == "allowed");
  CHECK(rule_of("CALL p(pg_read_file('x'))", s) ==
        std::string(rules::kServerFileFunction.id) + ": pg_read_file");
}

TEST_CASE("a function body: opaque languages and any COPY are denied") {
  const auto s = RulesScope::kFunctionBody;
  CHECK(rule_of("COPY t TO STDOUT", s) == std::string(rules::kCopyFile.id) + ": COPY");
  CHECK(rule_of("CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$",
                s) == std::string(rules::kOpaqueCode.id) + ": CREATE FUNCTION/PROCEDURE");
  CHECK(rule_of("CREATE FUNCTION f() RETURNS int LANGUAGE sql RETURN 1", s) == "allowed");
  CHECK(rule_of("DO $$ BEGIN END $$", s) == std::string(rules::kOpaqueCode.id) + ": DO");
}

TEST_CASE("statistics relations are pg_catalog's, bare or qualified") {
  const auto refs = [](const std::string& sql) {
    return parse_sql(sql).statements.front().relations;
  };
  CHECK(names_statistics_relation(refs("SELECT * FROM pg_stats").front()));
  CHECK(names_statistics_relation(refs("SELECT * FROM pg_catalog.pg_statistic").front()));
  CHECK_FALSE(names_statistics_relation(refs("SELECT * FROM myschema.pg_stats").front()));
  CHECK_FALSE(names_statistics_relation(refs("SELECT * FROM adult").front()));
}
