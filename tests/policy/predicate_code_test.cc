// policy/predicate_code.h: the compiled form kanon_mask.released reads. A
// reader of the documented layout (maskfn/kanon_mask.c) walks the code for
// every row of the seed example and must agree with the predicate; which
// columns the function may evaluate; the SQL it is called with. That the C
// function gives the SQL forms' values is policy_pg_test's.
#include "policy/predicate_code.h"

#include <doctest/doctest.h>

#include <random>

#include "policy/disclosure_tree.h"
#include "policy/table_masks.h"
#include "tests/policy/seed_rows.h"

using namespace kanon::policy;

namespace {

using Values = std::vector<std::optional<std::string_view>>;

// Unsigned LEB128 at `at`, moving `at` past it.
uint32_t varint(const std::string& b, size_t& at) {
  uint32_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto c = static_cast<unsigned char>(b.at(at++));
    v |= static_cast<uint32_t>(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
}

// Walks `code` as the C function does, with the row's values of the code's
// arguments; checks on the way that every branch points forward and that
// every value is written once.
bool walk(const PredicateCode& code, const Values& row) {
  const std::string& b = code.bytes;
  REQUIRE(b.substr(0, 4) == "KMP2");
  REQUIRE(static_cast<size_t>(b[4]) == code.arguments.size());
  size_t p = 5;
  const uint32_t root = varint(b, p);
  const uint32_t nvalues = varint(b, p);
  std::vector<std::pair<size_t, std::string>> values;  // argument, text
  for (uint32_t i = 0; i < nvalues; ++i) {
    const auto arg = static_cast<size_t>(static_cast<unsigned char>(b.at(p++)));
    const uint32_t len = varint(b, p);
    values.emplace_back(arg, b.substr(p, len));
    p += len;
  }
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = i + 1; j < values.size(); ++j) CHECK(values[i] != values[j]);
  const uint32_t ntests = varint(b, p);
  struct Test {
    uint32_t value, eq, ne;
  };
  std::vector<Test> tests;
  const auto target = [](uint32_t i, uint32_t branch) {
    return branch < 2 ? branch : i + 1 + branch;  // node id
  };
  for (uint32_t i = 0; i < ntests; ++i) {
    Test t{};
    t.value = varint(b, p);
    t.eq = target(i, varint(b, p));
    t.ne = target(i, varint(b, p));
    CHECK(t.value < nvalues);
    CHECK((t.eq < 2 || (t.eq > i + 2 && t.eq <= ntests + 1)));
    CHECK((t.ne < 2 || (t.ne > i + 2 && t.ne <= ntests + 1)));
    tests.push_back(t);
  }
  CHECK(p == b.size());
  uint32_t id = root;
  while (id >= 2) {
    const Test& t = tests.at(id - 2);
    const auto& [arg, text] = values.at(t.value);
    const auto& v = row[static_cast<size_t>(code.arguments[arg])];
    id = v && *v == text ? t.eq : t.ne;
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
  CHECK(sql.starts_with("\"kanon_mask\".\"released\"(E'\\\\x4b4d5032"));
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

namespace {

// A tree over (age integer, sex text, city text) where age takes `ages`
// values spread `step` apart, so that the predicates test many of them.
DisclosureTree age_tree(uint32_t seed, int ages, int step,
                        std::vector<std::vector<std::string>>& rows) {
  EncodedTable t({{"age", "integer", {}}, {"sex", "text", {}}, {"city", "text", {}}}, std::nullopt);
  std::mt19937 rng(seed);
  const std::vector<std::string> sexes = {"F", "M"}, cities = {"Hamlet", "Bigtown", "Midville"};
  for (int r = 0; r < 3000; ++r) {
    const int age = -20 + step * static_cast<int>(rng() % static_cast<uint32_t>(ages));
    rows.push_back({std::to_string(age), sexes[rng() % 2], cities[rng() % 3]});
    t.add_row(Values{rows.back()[0], rows.back()[1], rows.back()[2]});
  }
  return DisclosureTree::build(t, {.k = 8, .l = 0, .max_nodes = 4096});
}

// The first argument the SQL call passes.
std::string first_argument(const std::string& call) {
  const size_t at = call.find("::pg_catalog.bytea, ");
  REQUIRE(at != std::string::npos);
  const size_t from = at + std::string("::pg_catalog.bytea, ").size();
  return call.substr(from, call.find_first_of(",)", from) - from);
}

}  // namespace

TEST_CASE("switched: the own attribute first, the same answer for every row") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    std::vector<std::vector<std::string>> raw;
    const auto tree = age_tree(seed, 40, 1, raw);
    const auto predicates = compile_release_predicates(tree);
    const ReleasePredicate& age = predicates[0];
    REQUIRE(age.tested_values(0).size() >= 4);
    const ReleasePredicate switched = age.switched(0);
    // The root is the run of tests on age, one per value tested.
    uint32_t id = switched.root();
    size_t run = 0;
    for (; !ReleasePredicate::constant(id) && switched.test(id).attribute == 0; ++run)
      id = switched.test(id).if_not;
    CHECK(run >= 4);
    CHECK(run <= age.tested_values(0).size());
    std::vector<Values> rows;
    for (const auto& r : raw) rows.push_back(Values{r[0], r[1], r[2]});
    rows.push_back({std::nullopt, "F", "Hamlet"});
    rows.push_back({"1000", "M", "Bigtown"});  // an age never seen
    rows.push_back({"-20", std::nullopt, std::nullopt});
    size_t released = 0;
    const auto code = predicate_code(switched);
    for (const auto& row : rows) {
      const bool want = age.evaluate(row);
      CHECK(switched.evaluate(row) == want);
      CHECK(walk(code, row) == want);
      released += want;
    }
    CHECK(released > 0);
    CHECK(released < rows.size());
    // Every other attribute's predicate is switched on age just as well.
    for (size_t a = 1; a < predicates.size(); ++a) {
      const ReleasePredicate other = predicates[a].switched(0);
      for (const auto& row : rows) CHECK(other.evaluate(row) == predicates[a].evaluate(row));
    }
  }
}

TEST_CASE("the function's code tests an integer own attribute first where a table serves it") {
  std::vector<std::vector<std::string>> raw;
  const auto predicates = compile_release_predicates(age_tree(4, 40, 1, raw));
  const std::vector<SqlColumn> ints = {{"age", "pg_catalog.int4", ""},
                                       {"sex", "pg_catalog.text", ""},
                                       {"city", "pg_catalog.text", ""}};
  std::vector<SqlColumn> texts = ints;
  texts[0].type = "pg_catalog.text";
  const std::string root_attribute =
      ints[static_cast<size_t>(predicates[0].test(predicates[0].root()).attribute)].name;
  REQUIRE(root_attribute != "age");  // the tree does not start with age
  // int4: age first; text: the tree's own order (a run of text tests gains
  // nothing from a table).
  CHECK(first_argument(function_predicate_sql(predicates[0], ints).value()) == "\"age\"");
  CHECK(first_argument(function_predicate_sql(predicates[0], texts).value()) ==
        "\"" + root_attribute + "\"");
  // Values too far apart for a table (1,000 apart): the tree's order.
  raw.clear();
  const auto spread = compile_release_predicates(age_tree(4, 40, 1000, raw));
  REQUIRE(spread[0].root() >= 2);
  CHECK(first_argument(function_predicate_sql(spread[0], ints).value()) ==
        "\"" + ints[static_cast<size_t>(spread[0].test(spread[0].root()).attribute)].name + "\"");
}
