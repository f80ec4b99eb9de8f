// The 11-row example of ../shared/seeds/immuta-sql-k-anonymization.txt, k=2.
#include <doctest/doctest.h>

#include "policy/disclosure_tree.h"
#include "policy/predicate_sql.h"
#include "policy/release_predicate.h"
#include "tests/policy/seed_rows.h"

using namespace kanon::policy;

namespace {

using Row = std::vector<std::optional<std::string_view>>;

const std::vector<Row> kSeedRows = [] {
  std::vector<Row> rows;
  for (const auto& r : testing::kSeedRows) rows.push_back({r[0], r[1], r[2]});
  return rows;
}();

EncodedTable seed_table() {
  EncodedTable t({{"occupation", "text", {}}, {"city", "text", {}}, {"state", "text", {}}},
                 std::nullopt);
  for (const auto& r : kSeedRows) t.add_row(r);
  return t;
}

std::string cohort_text(const DisclosureTree& tree, int leaf) {
  std::string s = tree.nodes()[leaf].label + ":";
  for (const auto& c : tree.path(leaf))
    s += " " + tree.attributes()[c.attribute] + (c.equal ? "=" : "<>") + c.value;
  s += " rows=" + std::to_string(tree.nodes()[leaf].rows) + " released=";
  for (size_t a = 0; a < 3; ++a) s += (tree.nodes()[leaf].released >> a & 1) ? "Y" : "N";
  return s;
}

}  // namespace

TEST_CASE("seed example: five cohorts exactly as published") {
  const auto tree = DisclosureTree::build(seed_table(), {.k = 2, .l = 0, .max_nodes = 4096});
  std::vector<std::string> got;
  for (int leaf : tree.leaves()) got.push_back(cohort_text(tree, leaf));
  const std::vector<std::string> want = {
      "D111: state=OH city=Hamlet occupation=Farmer rows=2 released=YYY",
      "D112: state=OH city=Hamlet occupation<>Farmer rows=2 released=NYY",
      "D12: state=OH city<>Hamlet rows=2 released=NNY",
      "D21: state<>OH occupation=Accountant rows=3 released=YNN",
      "D22: state<>OH occupation<>Accountant rows=2 released=NNN",
  };
  CHECK(got == want);
  CHECK(tree.size() == 9);
}

TEST_CASE("seed example: attribute disclosure rules") {
  const auto tree = DisclosureTree::build(seed_table(), {.k = 2, .l = 0, .max_nodes = 4096});
  const auto preds = compile_release_predicates(tree);
  REQUIRE(preds.size() == 3);
  CHECK(preds[0].rule_text(tree.attributes()) ==
        "((state = OH) AND (city = Hamlet) AND (occupation = Farmer)) OR "
        "((state <> OH) AND (occupation = Accountant))");
  CHECK(preds[1].rule_text(tree.attributes()) == "((state = OH) AND (city = Hamlet))");
  CHECK(preds[2].rule_text(tree.attributes()) == "(state = OH)");
  const std::vector<SqlColumn> cols = {{"occupation", "text"}, {"city", "text"}, {"state", "text"}};
  CHECK(predicate_sql(preds[2], cols) ==
        "CASE WHEN \"state\" OPERATOR(pg_catalog.=) 'OH'::text THEN true ELSE false END");
  CHECK(predicate_sql(preds[1], cols, PredicateForm::kNestedCase) ==
        "CASE WHEN \"state\" OPERATOR(pg_catalog.=) 'OH'::text THEN CASE WHEN \"city\" "
        "OPERATOR(pg_catalog.=) 'Hamlet'::text THEN true "
        "ELSE false END ELSE false END");
}

TEST_CASE("seed example: the k-anonymized table and the two new rows") {
  const auto tree = DisclosureTree::build(seed_table(), {.k = 2, .l = 0, .max_nodes = 4096});
  const auto preds = compile_release_predicates(tree);
  using Out = std::vector<std::optional<std::string>>;
  const std::vector<Out> want = {
      {{}, {}, {}},
      {{}, {}, {}},
      {{}, "Hamlet", "OH"},
      {{}, "Hamlet", "OH"},
      {"Farmer", "Hamlet", "OH"},
      {"Farmer", "Hamlet", "OH"},
      {{}, {}, "OH"},
      {{}, {}, "OH"},
      {"Accountant", {}, {}},
      {"Accountant", {}, {}},
      {"Accountant", {}, {}},
  };
  for (size_t i = 0; i < kSeedRows.size(); ++i) {
    CAPTURE(i);
    CHECK(tree.release(kSeedRows[i]) == want[i]);
    for (size_t a = 0; a < 3; ++a) CHECK(preds[a].evaluate(kSeedRows[i]) == want[i][a].has_value());
  }
  const Row accountant_ny = {"Accountant", "New York", "NY"};
  const Row president = {"President of the United States of America", "Washington", "DC"};
  CHECK(tree.release(accountant_ny) == Out{"Accountant", {}, {}});
  CHECK(tree.release(president) == Out{{}, {}, {}});
}
