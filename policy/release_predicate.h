// ReleasePredicate: for one quasi-identifier, the boolean "is this attribute
// released in this row's cohort" (the seed's "attribute disclosure rules"),
// compiled from a DisclosureTree and simplified.
//
// The predicate is a reduced decision diagram over equality tests
// `attribute = 'value'` with TRUE/FALSE leaves: below a left branch on the
// attribute itself everything folds to TRUE, a test whose two branches are
// identical is dropped, and identical sub-diagrams are shared (hash-consed),
// so equality of branches is one integer compare. A test on NULL data takes
// the "not equal" branch, exactly as the tree routes NULL rows.
// Immutable after compile; shareable.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/disclosure_tree.h"

namespace kanon::policy {

class ReleasePredicate {
 public:
  static constexpr uint32_t kFalse = 0;
  static constexpr uint32_t kTrue = 1;

  struct Test {
    int attribute;
    std::string value;
    uint32_t if_equal;  // node id
    uint32_t if_not;    // node id
  };

  // Node ids >= 2 index tests()[id - 2].
  uint32_t root() const { return root_; }
  // The quasi-identifier (index in the tree's attributes) this predicate
  // releases; -1 when unknown.
  int attribute() const { return attribute_; }
  const Test& test(uint32_t id) const { return tests_[id - 2]; }
  static bool constant(uint32_t id) { return id < 2; }
  // Distinct tests reachable from the root.
  size_t size() const;
  bool evaluate(std::span<const std::optional<std::string_view>> values) const;
  // Disjunction of the paths to TRUE, as in the seed's table, e.g.
  // "((state = OH) AND (city = Hamlet))"; "TRUE"/"FALSE" for constants.
  std::string rule_text(const std::vector<std::string>& attribute_names) const;
  // The cofactor for rows whose `attribute` holds `value` (nullopt: NULL or
  // any value never tested): every test on the attribute is resolved.
  ReleasePredicate restricted(int attribute, const std::optional<std::string>& value) const;
  // The same predicate with the tests on `attribute` first: a run of tests
  // `attribute = v`, one per value tested (nearest the root first), each
  // "equal" branch the cofactor restricted(attribute, v), the run's end the
  // cofactor for NULL and every other value; the cofactors share their
  // common sub-diagrams. A row settles `attribute` once instead of at every
  // test on it down the tree (kanon_mask.released turns such a run on an
  // integer column into one table lookup).
  ReleasePredicate switched(int attribute) const;
  // The values tested on `attribute`, nearest the root first (breadth-first).
  std::vector<std::string> tested_values(int attribute) const;

 private:
  friend std::vector<ReleasePredicate> compile_release_predicates(const DisclosureTree& tree);
  uint32_t root_ = kFalse;
  int attribute_ = -1;
  std::vector<Test> tests_;
};

// One predicate per attribute of the tree, in the tree's attribute order.
std::vector<ReleasePredicate> compile_release_predicates(const DisclosureTree& tree);

}  // namespace kanon::policy
