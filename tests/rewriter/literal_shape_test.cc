// literal_shape.h: which integer constants a statement's shape takes out,
// which PostgreSQL's parse confirms as compared with a column, and the
// templates a shared rewrite is sent from.
#include "rewriter/literal_shape.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "rewriter/rewrite_cache.h"

using kanon::rewriter::constants_are_inert;
using kanon::rewriter::Edit;
using kanon::rewriter::fill_template;
using kanon::rewriter::kSlot;
using kanon::rewriter::literal_shape;
using kanon::rewriter::LiteralSpan;
using kanon::rewriter::shape_template;
using kanon::rewriter::template_repeats_constants;

namespace {

// The constants of the shape, as written.
std::vector<std::string> constants(const std::string& sql) {
  std::vector<std::string> out;
  if (const auto shape = literal_shape(sql))
    for (const auto& s : shape->spans) out.push_back(sql.substr(s.begin, s.end - s.begin));
  return out;
}

std::string key(const std::string& sql) {
  const auto shape = literal_shape(sql);
  return shape ? shape->key : "(none)";
}

bool confirmed(const std::string& sql) {
  const auto shape = literal_shape(sql);
  return shape && constants_are_inert(sql, shape->spans);
}

}  // namespace

TEST_CASE("a shape takes out integer constants, and only those") {
  using V = std::vector<std::string>;
  CHECK(constants("SELECT abalance FROM pgbench_accounts WHERE aid = 123;") == V{"123"});
  CHECK(constants("SELECT * FROM t WHERE a=1 AND b<>22 AND c IN (3,4)") == V{"1", "22", "3", "4"});
  CHECK(constants("SELECT 1") == V{"1"});
  // Not: inside strings (E'' with escapes too), quoted names, comments,
  // dollar quotes; parameters; names with digits; fractions and exponents.
  CHECK(constants("SELECT '12', E'\\'3', \"4\" FROM t -- 5\n/* 6 /* 7 */ */ WHERE $8 = a") == V{});
  CHECK(constants("SELECT $$ 9 $$, $q$ 10 $q$, t1.c2 FROM t1 WHERE x = 1.5 OR y = 2e3 OR z = .5") ==
        V{});
  CHECK(constants("SELECT 12abc, 3_000, 7$") == V{});
  CHECK(key("SELECT 5") != "(none)");
  // The class is in the key: zero, an integer, more than an integer.
  CHECK(key("SELECT a FROM t WHERE a = 0") ==
        std::string("SELECT a FROM t WHERE a = ") + kSlot + "z");
  CHECK(key("SELECT a FROM t WHERE a = 007") == key("SELECT a FROM t WHERE a = 2147483647"));
  CHECK(key("SELECT a FROM t WHERE a = 2147483647") != key("SELECT a FROM t WHERE a = 2147483648"));
  CHECK(key("SELECT a FROM t WHERE a = 5") != key("SELECT a FROM t WHERE a = 0"));
  CHECK(key("SELECT a FROM t WHERE a = 5") == key("SELECT a FROM t WHERE a = 6"));
  CHECK(key("SELECT a FROM t WHERE a = 5") != key("SELECT a FROM t WHERE b = 5"));
  // Refused: no constant, the slot byte, an unterminated string or comment.
  CHECK(key("SELECT a FROM t") == "(none)");
  CHECK(key(std::string("SELECT 1, '") + kSlot + "'") == "(none)");
  CHECK(key("SELECT 1, 'x") == "(none)");
  CHECK(key("SELECT 1 /* x") == "(none)");
  CHECK(key("SELECT 1, $a$ x") == "(none)");
}

TEST_CASE("PostgreSQL's parse confirms constants whose value no rule reads, and nothing else") {
  CHECK(confirmed("SELECT abalance FROM pgbench_accounts WHERE aid = 123;"));
  CHECK(confirmed("SELECT * FROM t WHERE 5 < a AND t.b >= 0 AND c IN (1, 2, 3)"));
  CHECK(confirmed("SELECT * FROM t WHERE a NOT IN (1, 2) AND b != 2147483648"));
  CHECK(confirmed("UPDATE t SET x = 'y' WHERE id = 3"));
  // pgbench's TPC-B-like transaction: arithmetic, negated constants (the
  // minus right before the digits), VALUES rows, an UPDATE's value.
  CHECK(confirmed("UPDATE pgbench_accounts SET abalance = abalance + -1234 WHERE aid = 56"));
  CHECK(
      confirmed("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (3, 1, 56, "
                "-1234, CURRENT_TIMESTAMP)"));
  CHECK(confirmed("UPDATE t SET n = 7, m = m * 2 - 1 WHERE id = -4"));
  CHECK(confirmed("SELECT * FROM t WHERE a + 1 = b"));
  CHECK(confirmed("VALUES (1, 2), (3, -2147483649)"));
  CHECK_FALSE(confirmed("SELECT 1"));                                 // a target
  CHECK_FALSE(confirmed("SELECT * FROM t LIMIT 10"));                 // LIMIT's
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE a = 1 LIMIT 10"));     // one of them is not
  CHECK_FALSE(confirmed("FETCH FORWARD 5 FROM c"));                   // FETCH's count
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE a = - 5"));            // the minus not right before
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE a = -0"));             // the minus's zero
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE f(a) = 5"));           // not a column
  CHECK_FALSE(confirmed("SELECT f(5)"));                              // a function's argument
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE a = 5::regclass"));    // cast
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE a OPERATOR(s.=) 5"));  // qualified operator
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE a ~~ 5"));             // not a comparison
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE a BETWEEN 1 AND 2"));  // not read
  CHECK_FALSE(confirmed("SELECT * FROM t WHERE a = 1 +"));            // does not parse
  // The scan's spans must be the parse's constants: a text whose spans the
  // parse does not confirm (a scan that went wrong) is refused.
  const std::string sql = "SELECT * FROM t WHERE a = 12";
  CHECK(constants_are_inert(sql, {{26, 28}}));
  CHECK_FALSE(constants_are_inert(sql, {{27, 28}}));
  CHECK_FALSE(constants_are_inert(sql, {{7, 8}}));
}

TEST_CASE("a template holds the sent text with slots for the constants, filled per statement") {
  const std::string sql = "SELECT b FROM t WHERE a = 12 AND c = 3";
  const auto shape = literal_shape(sql);
  REQUIRE(shape);
  // Insertions before the WHERE's condition and at the end; a replacement
  // of `b`.
  const std::vector<Edit> edits{{22, 22, "G AND ("}, {38, 38, ")"}, {7, 8, "m(b)"}};
  const auto templ = shape_template(sql, edits, shape->spans);
  REQUIRE(templ);
  CHECK(*templ ==
        std::string("SELECT m(b) FROM t WHERE G AND (a = ") + kSlot + " AND c = " + kSlot + ")");
  CHECK(fill_template(*templ, sql, shape->spans) ==
        "SELECT m(b) FROM t WHERE G AND (a = 12 AND c = 3)");
  const std::string other = "SELECT b FROM t WHERE a = 4567 AND c = 0";
  const auto other_shape = literal_shape(other);
  REQUIRE(other_shape);
  CHECK(fill_template(*templ, other, other_shape->spans) ==
        "SELECT m(b) FROM t WHERE G AND (a = 4567 AND c = 0)");
  // An insertion right before or after a constant stays outside it; one
  // inside it, or a replacement of any of its bytes, refuses the template.
  const auto around = shape_template(sql, {{26, 26, "+"}, {28, 28, "-"}}, shape->spans);
  REQUIRE(around);
  CHECK(fill_template(*around, sql, shape->spans) == "SELECT b FROM t WHERE a = +12- AND c = 3");
  CHECK_FALSE(shape_template(sql, {{27, 27, "x"}}, shape->spans));
  CHECK_FALSE(shape_template(sql, {{24, 27, "x"}}, shape->spans));
  CHECK_FALSE(shape_template(sql, {{27, 30, "x"}}, shape->spans));
}

TEST_CASE("a template that repeats a constant's value outside its slots is noticed") {
  const std::string sql = "SELECT b FROM t WHERE a = 039";
  const auto shape = literal_shape(sql);
  REQUIRE(shape);
  const std::string slot(1, kSlot);
  // A restriction filter would write the value again (as 39).
  CHECK(
      template_repeats_constants("SELECT b FROM (SELECT b FROM t WHERE CASE WHEN a = 39 THEN m "
                                 "END) t WHERE a = " +
                                     slot,
                                 sql, shape->spans));
  CHECK(template_repeats_constants("SELECT b FROM t WHERE a = " + slot + " OFFSET 039", sql,
                                   shape->spans));
  CHECK_FALSE(template_repeats_constants(
      "SELECT b FROM t WHERE g(7) AND a = " + slot + " AND x = 390 AND y = 3.9", sql,
      shape->spans));
  // Zero, however written.
  const std::string zero = "SELECT b FROM t WHERE a = 00";
  const auto zero_shape = literal_shape(zero);
  REQUIRE(zero_shape);
  CHECK(template_repeats_constants("x = 0 AND a = " + slot, zero, zero_shape->spans));
}

TEST_CASE("a cache key is its context's prefix followed by the text, so a shape's key shares it") {
  using kanon::rewriter::PlanContext;
  using kanon::rewriter::rewrite_cache_key;
  PlanContext context;
  context.search_path = "\"$user\", public";
  context.role = "analyst";
  context.parameter_types = {23};
  const std::string sql = "SELECT b FROM t WHERE a = 5";
  const std::string key = rewrite_cache_key(7, 11, context, sql);
  REQUIRE(key.size() > sql.size());
  CHECK(key.substr(key.size() - sql.size()) == sql);
  const std::string prefix = key.substr(0, key.size() - sql.size());
  const auto shape = literal_shape(sql);
  REQUIRE(shape);
  CHECK(rewrite_cache_key(7, 11, context, shape->key) == prefix + shape->key);
  // Every field of the context counts, and a field's bytes never pass for
  // the text's: the same text with another search_path, or the text's
  // start moved into the search_path, gives another key.
  PlanContext other = context;
  other.search_path = "public";
  CHECK(rewrite_cache_key(7, 11, other, sql) != key);
  other = context;
  other.search_path += "SELECT";
  CHECK(rewrite_cache_key(7, 11, other, sql.substr(6)) != key);
  other = context;
  other.parameter_types = {25};
  CHECK(rewrite_cache_key(7, 11, other, sql) != key);
  CHECK(rewrite_cache_key(8, 11, context, sql) != key);
}
