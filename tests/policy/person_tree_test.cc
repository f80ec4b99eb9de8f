// The disclosure tree with a person column (policy `person:`): every split
// keeps at least k distinct persons on both sides, so every released
// combination covers at least k persons however many rows one person has.
// Checked by a brute-force count over the released tuples that shares no
// code with the builder.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "policy/disclosure_tree.h"
#include "policy/encoded_table.h"

using namespace kanon::policy;

namespace {

struct Txn {
  std::string age, sex, zip, person;
};

EncodedTable encode(const std::vector<Txn>& rows, bool with_person) {
  std::optional<EncodedColumn> person;
  if (with_person) person = EncodedColumn{"person", "text", {}};
  EncodedTable t({{"age", "text", {}}, {"sex", "text", {}}, {"zip", "text", {}}}, std::nullopt,
                 std::move(person));
  for (const auto& r : rows) {
    std::vector<std::optional<std::string_view>> v = {r.age, r.sex, r.zip};
    if (with_person) v.emplace_back(r.person);
    t.add_row(v);
  }
  return t;
}

// Per released combination (the released tuple), the rows and the distinct
// persons it covers.
std::map<std::string, std::pair<size_t, std::set<std::string>>> released(
    const DisclosureTree& tree, const std::vector<Txn>& rows) {
  std::map<std::string, std::pair<size_t, std::set<std::string>>> out;
  for (const auto& r : rows) {
    const std::vector<std::optional<std::string_view>> v = {r.age, r.sex, r.zip};
    std::string key;
    for (const auto& x : tree.release(v)) key += (x ? *x : std::string("*")) + "|";
    ++out[key].first;
    out[key].second.insert(r.person);
  }
  return out;
}

// A transactions table: `people` customers with 1-3 purchases each, and one
// customer with 60 purchases and a (age, sex, zip) no one else has.
std::vector<Txn> transactions(size_t people, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Txn> rows;
  for (size_t p = 0; p < people; ++p) {
    const Txn t{std::to_string(20 + rng() % 5), rng() % 2 ? "F" : "M",
                std::to_string(1000 + rng() % 4), std::string("c").append(std::to_string(p))};
    for (size_t n = 1 + rng() % 3; n > 0; --n) rows.push_back(t);
  }
  for (int n = 0; n < 60; ++n) rows.push_back({"99", "M", "9999", "whale"});
  return rows;
}

}  // namespace

TEST_CASE("person: a customer with many rows is not a cohort of their own") {
  const auto rows = transactions(200, 7);
  const TreeOptions options{.k = 5, .l = 0, .max_nodes = 4096};
  // Counting rows, the whale's 60 purchases are released: one person.
  const auto by_rows = released(DisclosureTree::build(encode(rows, false), options), rows);
  size_t single = 0;
  for (const auto& [tuple, c] : by_rows)
    if (c.second.size() < options.k && tuple.find("99|") != std::string::npos) ++single;
  CHECK(single > 0);
  // Counting persons: every released combination covers k persons.
  const auto tree = DisclosureTree::build(encode(rows, true), options);
  CHECK(tree.leaves().size() > 1);  // still releases something
  for (const auto& [tuple, c] : released(tree, rows)) {
    CAPTURE(tuple);
    CHECK(c.second.size() >= options.k);
  }
}

TEST_CASE("person: random tables, every released combination covers k persons") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    std::vector<Txn> rows;
    const size_t people = 20 + rng() % 200;
    for (size_t p = 0; p < people; ++p) {
      // Some persons' rows differ (a person in several cohorts).
      for (size_t n = 1 + rng() % 6; n > 0; --n)
        rows.push_back({std::to_string(rng() % 6), rng() % 2 ? "F" : "M", std::to_string(rng() % 3),
                        std::string("p").append(std::to_string(p))});
    }
    const uint64_t k = 2 + rng() % 6;
    const TreeOptions options{.k = k, .l = 0, .max_nodes = 4096};
    const auto tree = DisclosureTree::build(encode(rows, true), options);
    for (const auto& [tuple, c] : released(tree, rows)) {
      CAPTURE(tuple);
      CHECK(c.second.size() >= k);
    }
    // The root holds every row; children's rows add up.
    size_t total = 0;
    for (int leaf : tree.leaves()) total += tree.nodes()[static_cast<size_t>(leaf)].rows;
    CHECK(total == rows.size());
  }
}
