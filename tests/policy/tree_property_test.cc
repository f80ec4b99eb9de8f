// Pure tests of the tree builder, the predicate compiler and the COPY/SQL
// text helpers (no database; run under ASan in CI).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "policy/disclosure_tree.h"
#include "policy/form_choice.h"
#include "policy/predicate_sql.h"
#include "policy/release_predicate.h"
#include "policy/sql_text.h"
#include "store/table_loader.h"

using namespace kanon::policy;
using namespace kanon::store;

namespace {

using Values = std::vector<std::optional<std::string>>;

std::vector<std::optional<std::string_view>> views(const Values& v) {
  std::vector<std::optional<std::string_view>> out;
  for (const auto& x : v) out.push_back(x ? std::optional<std::string_view>(*x) : std::nullopt);
  return out;
}

Values random_row(std::mt19937& rng, int attrs, bool sensitive) {
  Values r;
  for (int a = 0; a < attrs; ++a) {
    const unsigned v = rng() % (3 + a * 2);
    r.push_back(v == 0 && a % 2 ? std::nullopt : std::optional("v" + std::to_string(v)));
  }
  if (sensitive)
    r.push_back(rng() % 9 == 0 ? std::nullopt : std::optional("s" + std::to_string(rng() % 4)));
  return r;
}

}  // namespace

TEST_CASE("random tables: leaves >= k, l-diversity, cap, predicates agree with the tree") {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const int attrs = 1 + static_cast<int>(seed % 5);
    const bool sensitive = seed % 3 == 0;
    std::vector<EncodedColumn> cols;
    for (int a = 0; a < attrs; ++a) cols.push_back({"a" + std::to_string(a), "text", {}});
    EncodedTable table(std::move(cols),
                       sensitive ? std::optional(EncodedColumn{"s", "text", {}}) : std::nullopt);
    std::vector<Values> rows;
    const int n = 50 + static_cast<int>(rng() % 400);
    for (int i = 0; i < n; ++i) {
      rows.push_back(random_row(rng, attrs, sensitive));
      table.add_row(views(rows.back()));
    }
    TreeOptions opts;
    opts.k = 2 + seed % 6;
    opts.l = sensitive ? 2 : 0;
    opts.max_nodes = seed % 4 == 0 ? 11 : 100000;
    const auto tree = DisclosureTree::build(table, opts);
    CHECK(tree.size() <= opts.max_nodes);
    CHECK(tree.root().rows == static_cast<uint64_t>(n));
    uint64_t leaf_rows = 0;
    for (int leaf : tree.leaves()) {
      CHECK(tree.nodes()[leaf].rows >= opts.k);
      leaf_rows += tree.nodes()[leaf].rows;
    }
    CHECK(leaf_rows == static_cast<uint64_t>(n));

    const auto preds = compile_release_predicates(tree);
    std::map<int, uint64_t> counted;
    std::map<int, std::set<std::string>> diverse;
    for (const auto& r : rows) {
      const auto v = views(r);
      const int leaf = tree.leaf_of(v);
      ++counted[leaf];
      if (sensitive && r.back()) diverse[leaf].insert(*r.back());
      for (int a = 0; a < attrs; ++a) {
        CHECK(preds[a].evaluate(v) == bool(tree.nodes()[leaf].released >> a & 1));
        // The switch form's cofactor for the row's own value agrees.
        const auto& own = r[static_cast<size_t>(a)];
        const auto tested = preds[a].tested_values(a);
        const bool known = own && std::find(tested.begin(), tested.end(), *own) != tested.end();
        CHECK(preds[a].restricted(a, known ? own : std::nullopt).evaluate(v) ==
              preds[a].evaluate(v));
      }
    }
    for (int leaf : tree.leaves()) {
      CHECK(counted[leaf] == tree.nodes()[leaf].rows);
      if (sensitive && tree.size() > 1) CHECK(diverse[leaf].size() >= 2);
    }
    // Unseen rows follow the same rules.
    for (int i = 0; i < 50; ++i) {
      Values r = random_row(rng, attrs, false);
      r[0] = "new" + std::to_string(i);
      const auto v = views(r);
      const int leaf = tree.leaf_of(v);
      for (int a = 0; a < attrs; ++a)
        CHECK(preds[a].evaluate(v) == bool(tree.nodes()[leaf].released >> a & 1));
    }
  }
}

TEST_CASE("ties: larger count, then policy attribute order, then byte-wise value") {
  // Every value occurs twice; k=2 and 8 rows: all pairs qualify with c=2.
  EncodedTable t({{"x", "text", {}}, {"y", "text", {}}}, std::nullopt);
  const std::vector<std::pair<std::string, std::string>> data = {
      {"b", "q"},        {"b", "q"},        {"a", "r"}, {"a", "r"},
      {"\xc3\xa9", "s"}, {"\xc3\xa9", "s"}, {"Z", "t"}, {"Z", "t"}};
  for (const auto& [x, y] : data) {
    const std::vector<std::optional<std::string_view>> row = {x, y};
    t.add_row(row);
  }
  const auto tree = DisclosureTree::build(t, {.k = 2, .l = 0, .max_nodes = 100});
  CHECK(tree.root().attribute == 0);  // x before y
  CHECK(tree.root().value == "Z");    // 'Z' (0x5a) < 'a' < 'b' < 0xc3
  CHECK(tree.nodes()[tree.root().right].value == "a");

  // A larger count wins over attribute order.
  EncodedTable u({{"x", "text", {}}, {"y", "text", {}}}, std::nullopt);
  for (int i = 0; i < 6; ++i) {
    const std::string x = "x" + std::to_string(i), y = i < 4 ? "common" : "rare";
    const std::vector<std::optional<std::string_view>> row = {x, y};
    u.add_row(row);
  }
  const auto t2 = DisclosureTree::build(u, {.k = 2, .l = 0, .max_nodes = 100});
  CHECK(t2.root().attribute == 1);
  CHECK(t2.root().value == "common");
}

TEST_CASE("NULL never matches and is never released") {
  EncodedTable t({{"x", "text", {}}}, std::nullopt);
  for (int i = 0; i < 3; ++i) t.add_row(std::vector<std::optional<std::string_view>>{std::nullopt});
  for (int i = 0; i < 3; ++i) t.add_row(std::vector<std::optional<std::string_view>>{"v"});
  const auto tree = DisclosureTree::build(t, {.k = 3, .l = 0, .max_nodes = 100});
  REQUIRE(tree.size() == 3);
  CHECK(tree.root().value == "v");
  CHECK(tree.nodes()[tree.root().right].rows == 3);
  const auto preds = compile_release_predicates(tree);
  CHECK(!preds[0].evaluate(std::vector<std::optional<std::string_view>>{std::nullopt}));
  CHECK(predicate_sql(preds[0], {{"x", "integer"}}) ==
        "CASE WHEN \"x\" OPERATOR(pg_catalog.=) 'v'::integer THEN true ELSE false END");
}

TEST_CASE("l-diversity: a NULL sensitive value is not a distinct value") {
  // x=a: 3 rows with sensitive s1, s2, NULL; x=b: 3 rows with s1, s2, s3.
  // With l=3 the split on x would leave {s1, s2, NULL} on one side: only 2
  // distinct non-NULL values, so it must not happen; with l=2 it does.
  auto build = [](uint32_t l, const char* third) {
    EncodedTable t({{"x", "text", {}}}, EncodedColumn{"s", "text", {}});
    const std::vector<std::pair<std::string, std::optional<std::string>>> rows = {
        {"a", "s1"}, {"a", "s2"}, {"a", third ? std::optional<std::string>(third) : std::nullopt},
        {"b", "s1"}, {"b", "s2"}, {"b", "s3"}};
    for (const auto& [x, s] : rows) {
      const std::vector<std::optional<std::string_view>> row = {
          x, s ? std::optional<std::string_view>(*s) : std::nullopt};
      t.add_row(row);
    }
    return DisclosureTree::build(t, {.k = 3, .l = l, .max_nodes = 100});
  };
  CHECK(build(3, nullptr).size() == 1);  // NULL does not count: no split
  CHECK(build(2, nullptr).size() == 3);
  CHECK(build(3, "s3").size() == 3);  // a third real value: the split is diverse
  CHECK(build(3, "s3").root().value == "a");
}

TEST_CASE("flat form merges same-result arms into ANY") {
  // x takes 10 values of 2 rows each; k=2: a right chain of 9 tests on x.
  EncodedTable t({{"x", "text", {}}}, std::nullopt);
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 2; ++j) {
      const std::string v = "v" + std::to_string(i);
      t.add_row(std::vector<std::optional<std::string_view>>{v});
    }
  const auto tree = DisclosureTree::build(t, {.k = 2, .l = 0, .max_nodes = 100});
  const auto preds = compile_release_predicates(tree);
  CHECK(predicate_sql(preds[0], {{"x", "text"}}) ==
        "CASE WHEN \"x\" OPERATOR(pg_catalog.=) ANY "
        "('{\"v0\",\"v1\",\"v2\",\"v3\",\"v4\",\"v5\",\"v6\",\"v7\",\"v8\"}'"
        "::text[]) THEN true ELSE false END");
  CHECK(masked_column_sql(preds[0], {{"x", "text"}}, "\"x\"", "text") ==
        "CASE WHEN \"x\" OPERATOR(pg_catalog.=) ANY "
        "('{\"v0\",\"v1\",\"v2\",\"v3\",\"v4\",\"v5\",\"v6\",\"v7\",\"v8\"}'"
        "::text[]) THEN \"x\" ELSE NULL END");
  CHECK(preds[0].size() == 9);
}

TEST_CASE("switch form: one arm per value of the own attribute, cofactors flat") {
  // The seed's example: occupation's rule depends on state and city.
  EncodedTable t({{"occupation", "text", {}}, {"city", "text", {}}, {"state", "text", {}}},
                 std::nullopt);
  const std::vector<std::vector<std::string>> rows = {
      {"Nurse", "Hamlet", "OH"},      {"Teacher", "Hamlet", "OH"},    {"Farmer", "Hamlet", "OH"},
      {"Farmer", "Hamlet", "OH"},     {"Nurse", "Columbus", "OH"},    {"Teacher", "Dayton", "OH"},
      {"Accountant", "Austin", "TX"}, {"Accountant", "Dallas", "TX"}, {"Accountant", "Miami", "FL"},
      {"Nurse", "Austin", "TX"},      {"Teacher", "Miami", "FL"}};
  for (const auto& r : rows) {
    const std::vector<std::optional<std::string_view>> row = {r[0], r[1], r[2]};
    t.add_row(row);
  }
  const auto tree = DisclosureTree::build(t, {.k = 2, .l = 0, .max_nodes = 100});
  const auto preds = compile_release_predicates(tree);
  const std::vector<SqlColumn> attrs = {
      {"occupation", "text"}, {"city", "text"}, {"state", "text"}};
  CHECK(preds[0].attribute() == 0);
  CHECK(preds[0].tested_values(0) == std::vector<std::string>{"Accountant", "Farmer"});
  CHECK(predicate_sql(preds[0], attrs, PredicateForm::kSwitchCase) ==
        "CASE WHEN \"occupation\" OPERATOR(pg_catalog.=) 'Accountant'::text THEN CASE WHEN "
        "\"state\" OPERATOR(pg_catalog.=) 'OH'::text "
        "THEN false ELSE true END WHEN \"occupation\" OPERATOR(pg_catalog.=) 'Farmer'::text THEN "
        "CASE WHEN "
        "\"state\" OPERATOR(pg_catalog.=) 'OH'::text THEN CASE WHEN \"city\" "
        "OPERATOR(pg_catalog.=) 'Hamlet'::text THEN true ELSE false "
        "END ELSE false END ELSE false END");
  // A predicate that never tests its own attribute keeps the flat form.
  CHECK(predicate_sql(preds[2], attrs, PredicateForm::kSwitchCase) ==
        predicate_sql(preds[2], attrs, PredicateForm::kSwitchCase));
  // The cost model, by hand. Flat: WHEN state = OH (1) THEN [city = Hamlet
  // (1) THEN occupation = Farmer (1)] WHEN occupation = Accountant (1):
  // 4 Hamlet rows x 3 + 2 other OH rows x 2 + 5 rows outside OH x 2 = 26.
  // Switch: 3 Accountants x (1 + 1) + 2 Farmers x (2 + 2) + 6 others x 2 = 26.
  const FormCost c = form_cost(preds[0], t);
  CHECK(c.flat == doctest::Approx(26.0 / 11));
  CHECK(c.switch_ == doctest::Approx(26.0 / 11));
  CHECK(choose_forms(preds, t)[0] == PredicateForm::kFlatCase);  // a tie keeps flat
  // city's rule (state = OH) AND (city = Hamlet): the switch tests the city
  // first, so rows outside OH pay for the city test instead of the state's.
  const FormCost city = form_cost(preds[1], t);
  CHECK(city.flat == doctest::Approx((6 * 2 + 5 * 1) / 11.0));
  CHECK(city.switch_ == doctest::Approx((4 * 2 + 7 * 1) / 11.0));
  CHECK(choose_forms(preds, t)[1] == PredicateForm::kSwitchCase);
}

TEST_CASE("quoting") {
  CHECK(quote_identifier("marital-status") == "\"marital-status\"");
  CHECK(quote_identifier("a\"b") == "\"a\"\"b\"");
  CHECK(quote_literal("O'Hara") == "'O''Hara'");
  CHECK(quote_literal("back\\slash'") == "E'back\\\\slash'''");
  CHECK(typed_literal("2020-01-01", "date") == "'2020-01-01'::date");
  CHECK(typed_array_literal({"a\"b", "c\\d", "{x}"}, "text") ==
        "E'{\"a\\\\\"b\",\"c\\\\\\\\d\",\"{x}\"}'::text[]");
  CHECK(qualified_name("public", "people") == "\"public\".\"people\"");
}

TEST_CASE("COPY text lines") {
  std::string storage;
  std::vector<std::optional<std::string_view>> f;
  REQUIRE(parse_copy_line("a\t\\N\tb\\tc\\\\d\t\t\\101\\x41\n", storage, f));
  REQUIRE(f.size() == 5);
  CHECK(f[0] == "a");
  CHECK(!f[1]);
  CHECK(f[2] == "b\tc\\d");
  CHECK(f[3] == "");
  CHECK(f[4] == "AA");
  CHECK(!parse_copy_line("a\\", storage, f));
  CHECK(!parse_copy_line("x\\N", storage, f));
}
