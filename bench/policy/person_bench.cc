// person_bench: the disclosure tree with a person column (policy `person:`,
// policy/disclosure_tree.h) against the same tree counting rows, in memory,
// in one run: a transactions table of --rows purchases (default 1M) by
// customers with a skewed number of purchases each (1 to 40, most few),
// every purchase carrying its customer's (age, sex, zip, segment). Prints
// the build times, the ratio, the leaves, the released fraction and, from
// the tree's leaves, the fewest distinct customers behind a released
// combination in each tree.
//
//   build/bench/policy/person_bench [--rows N] [--k K]
#include <fmt/format.h>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/stopwatch.h"
#include "policy/disclosure_tree.h"
#include "policy/encoded_table.h"
#include "policy/history_refresh.h"

using namespace kanon::policy;

namespace {

struct Purchase {
  uint32_t customer;
  std::string age, sex, zip, segment;
};

EncodedTable encode(const std::vector<Purchase>& rows, bool with_person) {
  std::optional<EncodedColumn> person;
  if (with_person) person = EncodedColumn{"customer", "text", {}};
  EncodedTable t(
      {{"age", "text", {}}, {"sex", "text", {}}, {"zip", "text", {}}, {"segment", "text", {}}},
      std::nullopt, std::move(person));
  std::string customer;
  for (const auto& r : rows) {
    customer = std::to_string(r.customer);
    std::vector<std::optional<std::string_view>> v = {r.age, r.sex, r.zip, r.segment};
    if (with_person) v.emplace_back(customer);
    t.add_row(v);
  }
  return t;
}

// The fewest distinct customers in a leaf of `tree` (what a released
// combination covers).
size_t fewest_customers(const DisclosureTree& tree, const std::vector<Purchase>& rows) {
  std::vector<std::set<uint32_t>> in(tree.nodes().size());
  for (const auto& r : rows) {
    const std::vector<std::optional<std::string_view>> v = {r.age, r.sex, r.zip, r.segment};
    in[static_cast<size_t>(tree.leaf_of(v))].insert(r.customer);
  }
  size_t fewest = SIZE_MAX;
  for (int leaf : tree.leaves()) fewest = std::min(fewest, in[static_cast<size_t>(leaf)].size());
  return fewest;
}

}  // namespace

int main(int argc, char** argv) {
  size_t target = 1000000;
  uint64_t k = 10;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) {
      target = std::stoul(argv[++i]);
    } else if (!std::strcmp(argv[i], "--k") && i + 1 < argc) {
      k = std::stoul(argv[++i]);
    } else {
      fmt::print(stderr, "usage: person_bench [--rows N] [--k K]\n");
      return 1;
    }
  }
  std::mt19937_64 rng(5);
  std::vector<Purchase> rows;
  rows.reserve(target);
  const char* segments[] = {"retail", "online", "wholesale"};
  for (uint32_t c = 0; rows.size() < target; ++c) {
    const Purchase p{c, std::to_string(18 + rng() % 70), rng() % 2 ? "F" : "M",
                     std::to_string(10000 + rng() % 400), segments[rng() % 3]};
    // Skewed: half buy once, a few buy up to 40 times.
    const size_t n = rng() % 2 ? 1 : 1 + (rng() % 8 == 0 ? rng() % 40 : rng() % 4);
    for (size_t j = 0; j < n && rows.size() < target; ++j) rows.push_back(p);
  }
  const TreeOptions options{.k = k, .l = 0, .max_nodes = 8192};
  kanon::base::Stopwatch clock;
  const EncodedTable by_row = encode(rows, false);
  const double encode_rows_ms = clock.lap_ms();
  const EncodedTable by_person = encode(rows, true);
  const double encode_person_ms = clock.lap_ms();
  const auto rows_tree = DisclosureTree::build(by_row, options);
  const double rows_ms = clock.lap_ms();
  const auto person_tree = DisclosureTree::build(by_person, options);
  const double person_ms = clock.lap_ms();
  fmt::print("{} purchases, {} distinct rows counting rows, {} counting persons, k = {}\n",
             rows.size(), by_row.distinct_rows(), by_person.distinct_rows(), k);
  fmt::print("{:<10} {:>10} {:>10} {:>8} {:>10} {:>16}\n", "count", "encode_ms", "tree_ms",
             "leaves", "released", "fewest_persons");
  fmt::print("{:<10} {:>10.0f} {:>10.0f} {:>8} {:>10.4f} {:>16}\n", "rows", encode_rows_ms, rows_ms,
             rows_tree.leaves().size(), released_fraction(rows_tree, by_row),
             fewest_customers(rows_tree, rows));
  fmt::print("{:<10} {:>10.0f} {:>10.0f} {:>8} {:>10.4f} {:>16}\n", "persons", encode_person_ms,
             person_ms, person_tree.leaves().size(), released_fraction(person_tree, by_person),
             fewest_customers(person_tree, rows));
  fmt::print("tree build, persons / rows: {:.2f}x\n", person_ms / rows_ms);
  return 0;
}
