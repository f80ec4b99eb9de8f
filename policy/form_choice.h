// Cost-based choice of the emitted SQL form, per release predicate
// (PredicateForm::kCostBased): the expected number of comparisons PostgreSQL
// evaluates per row, measured on the rows the tree was built from, for the
// flat form and for the switch form; the cheaper one wins.
//
// Cost model (PostgreSQL's expression interpreter, JIT off): an arm
// `a = 'v'` costs 1; an arm `a = ANY(array)` costs its position of the match
// (or the array's length) below 9 elements and 1.5 from 9 on, where
// PostgreSQL probes a hash table. bench/policy checks the model against
// measured times.
#pragma once

#include <vector>

#include "policy/encoded_table.h"
#include "policy/predicate_sql.h"
#include "policy/release_predicate.h"

namespace kanon::policy {

struct FormCost {
  double flat = 0;     // expected comparisons per row, kFlatCase
  double switch_ = 0;  // expected comparisons per row, kSwitchCase
};

// REQUIRES: predicate belongs to `table`'s attribute predicate.attribute().
// Uses at most `max_rows` distinct rows (evenly spread), weighted.
FormCost form_cost(const ReleasePredicate& predicate, const EncodedTable& table,
                   size_t max_rows = 20000);

// kSwitchCase where it is expected to be cheaper by 5% or more, else kFlatCase.
std::vector<PredicateForm> choose_forms(const std::vector<ReleasePredicate>& predicates,
                                        const EncodedTable& table);

}  // namespace kanon::policy
