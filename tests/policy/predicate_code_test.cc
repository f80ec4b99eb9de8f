// policy/predicate_code.h: the compiled form kanon_mask.released reads. A
// reader of the documented layout (maskfn/kanon_mask.c) walks the code for
// every row of the seed example and must agree with the predicate; which
// columns the function may evaluate; the SQL it is called with. That the C
// function gives the SQL forms' values is policy_pg_test's.
#include "policy/predicate_code.h"

#include <doctest/doctest.h>

#include "policy/disclosure_tree.h"
#include "policy/table_masks.h"
#include "tests/policy/seed_rows.h"

using namespace kanon::policy;

namespace {

using Values = std::vector<std::optional<std::string_view>>;

uint32_t u32(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b.at(at + i));
  return v;
}

// Walks `code` as the C function does, with the row's values of the code's
// arguments; checks on the way that every branch points forward.
bool walk(const PredicateCode& code, const Values& row) {
  const std::string& b = code.bytes;
  REQUIRE(b.substr(0, 4) == "KMP1");
  REQUIRE(static_cast<size_t>(b[4]) == code.arguments.size());
  const uint32_t ntests = u32(b, 9);
  std::vector<size_t> at;  // offset of each test
  size_t p = 13;
  for (uint32_t i = 0; i < ntests; ++i) {
    at.push_back(p);
    const uint32_t eq = u32(b, p + 1), ne = u32(b, p + 5);
    CHECK((eq < 2 || eq > i + 2));
    CHECK((ne < 2 || ne > i + 2));
    p += 13 + u32(b, p + 9);
  }
  CHECK(p == b.size());
  uint32_t id = u32(b, 5);
  while (id >= 2) {
    const size_t t = at[id - 2];
    const auto& v = row[static_cast<size_t>(code.arguments[static_cast<unsigned char>(b[t])])];
    const bool equal = v && *v == std::string_view(b).substr(t + 13, u32(b, t + 9));
    id = equal ? u32(b, t + 1) : u32(b, t + 5);
  }
  return id == 1;
}

DisclosureTree seed_tree() {
  EncodedTable t({{"occupation", "text", {}}, {"city", "text", {}}, {"state", "text", {}}},
                 std::nullopt);
  for (const auto& r : testing::kSeedRows) t.add_row(Values{r[0], r[1], r[2]});
  return DisclosureTree::build(t, {.k = 2, .l = 0, .max_nodes = 4096});
}

}  // namespace

TEST_CASE("the code walks to the predicate's value for every row, NULLs and unseen values") {
  const auto tree = seed_tree();
  const auto predicates = compile_release_predicates(tree);
  std::vector<Values> rows;
  for (const auto& r : testing::kSeedRows) rows.push_back(Values{r[0], r[1], r[2]});
  rows.push_back({std::nullopt, "Hamlet", "OH"});
  rows.push_back({"Farmer", std::nullopt, "OH"});
  rows.push_back({"Astronaut", "Hamlet", std::nullopt});
  rows.push_back({"Farmer", "Hamlet", "OHIO"});
  int released = 0;
  for (const auto& p : predicates) {
    const auto code = predicate_code(p);
    for (const auto& row : rows) {
      CAPTURE(p.attribute());
      const bool want = p.evaluate(row);
      CHECK(walk(code, row) == want);
      released += want;
    }
  }
  CHECK(released > 0);                                  // not all FALSE
  CHECK(released < static_cast<int>(3 * rows.size()));  // not all TRUE
}

TEST_CASE("the code passes only the attributes the predicate tests") {
  const auto predicates = compile_release_predicates(seed_tree());
  // state is released in D111, D112 and D12 (state = OH): one test on state.
  const auto state = predicate_code(predicates[2]);
  CHECK(state.arguments == std::vector<int>{2});
  // occupation: D111 (state = OH, city = Hamlet, occupation = Farmer) and D21
  // (state <> OH, occupation = Accountant).
  const auto occupation = predicate_code(predicates[0]);
  CHECK(occupation.arguments.size() == 3);
  CHECK(occupation.arguments.front() == 2);  // the root tests state
}

TEST_CASE("function_evaluable: pg_catalog's equality on types compared by their bytes") {
  CHECK(function_evaluable({"a", "pg_catalog.text", ""}));
  CHECK(function_evaluable({"a", "pg_catalog.text", "OPERATOR(pg_catalog.=)"}));
  CHECK(function_evaluable({"a", "pg_catalog.\"varchar\"", "OPERATOR(pg_catalog.=)"}));
  CHECK(function_evaluable({"a", "pg_catalog.int4", "OPERATOR(pg_catalog.=)"}));
  CHECK(function_evaluable({"a", "pg_catalog.date", ""}));
  CHECK(function_evaluable({"a", "integer", ""}));
  // numeric (1.0 = 1.00), float (-0 = 0), bpchar (trailing blanks), arrays,
  // domains and a type with its own `=` (citext) are left to the SQL forms.
  CHECK_FALSE(function_evaluable({"a", "pg_catalog.\"numeric\"", ""}));
  CHECK_FALSE(function_evaluable({"a", "pg_catalog.float8", ""}));
  CHECK_FALSE(function_evaluable({"a", "pg_catalog.bpchar", ""}));
  CHECK_FALSE(function_evaluable({"a", "pg_catalog.text[]", ""}));
  CHECK_FALSE(function_evaluable({"a", "public.short_text", ""}));
  CHECK_FALSE(function_evaluable({"a", "public.citext", "OPERATOR(public.=)"}));
  CHECK_FALSE(function_evaluable({"a", "pg_catalog.text", "OPERATOR(public.=)"}));
}

TEST_CASE("the SQL of a call: qualified, an ASCII bytea constant, the tested columns") {
  const auto predicates = compile_release_predicates(seed_tree());
  const std::vector<SqlColumn> attrs = {{"occupation", "pg_catalog.text", ""},
                                        {"city", "pg_catalog.text", ""},
                                        {"state", "pg_catalog.text", ""}};
  const std::string sql = function_predicate_sql(predicates[2], attrs).value();
  CHECK(sql.starts_with("\"kanon_mask\".\"released\"(E'\\\\x4b4d5031"));
  CHECK(sql.ends_with("'::pg_catalog.bytea, \"state\")"));
  for (char c : sql) CHECK((c >= 0x20 && c < 0x7f));
  // Constant predicates stay constants.
  ReleasePredicate always;  // root kFalse
  CHECK(function_predicate_sql(always, attrs) == "false");
  // A tested column the function cannot compare: no call at all.
  const std::vector<SqlColumn> numeric_state = {
      attrs[0], attrs[1], {"state", "pg_catalog.\"numeric\"", ""}};
  CHECK_FALSE(function_predicate_sql(predicates[2], numeric_state));
}

TEST_CASE("build_masks: kFunction where every tested column allows it, the flat form elsewhere") {
  const auto predicates = compile_release_predicates(seed_tree());
  TablePolicy policy;
  policy.schema = "public";
  policy.table = "people";
  policy.quasi_identifiers = {"occupation", "city", "state"};
  TableInfo info{"public", "people", {}, {}};
  info.columns = {
      {"occupation", "text", "text", "pg_catalog.text", "pg_catalog.text", ""},
      {"city", "text", "text", "pg_catalog.text", "pg_catalog.text", ""},
      {"state", "numeric", "numeric", "pg_catalog.\"numeric\"", "pg_catalog.\"numeric\"", ""}};
  const auto masks = build_masks(policy, info, predicates, PredicateForm::kFunction);
  REQUIRE(masks.columns.size() == 3);
  // Every predicate tests state, a numeric here: none may call the function.
  for (const auto& c : masks.columns) CHECK(c.expression.find("kanon_mask") == std::string::npos);
  info.columns[2] = {"state", "text", "text", "pg_catalog.text", "pg_catalog.text", ""};
  const auto fn = build_masks(policy, info, predicates, PredicateForm::kFunction);
  for (const auto& c : fn.columns)
    CHECK(c.expression.starts_with("CASE WHEN \"kanon_mask\".\"released\"("));
}
