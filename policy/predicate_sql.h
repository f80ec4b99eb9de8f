// Emitting a ReleasePredicate as SQL.
//
// Every form yields only TRUE or FALSE, never NULL: tests sit in CASE WHEN
// conditions (a NULL comparison falls through to the next arm, i.e. the
// "not equal" branch) and every result is a constant or another CASE.
// Literals are cast to the column's type, so integers, dates and numerics
// compare as values, not as text. Operators and types are written
// schema-qualified (`"city" OPERATOR(pg_catalog.=) 'v'::pg_catalog.text`):
// the masks see raw values, and no operator, function or type a session can
// put on its search_path may be chosen for them. Below, `a = 'v'` is short
// for that.
//
//   kNestedCase  CASE WHEN a = 'v' THEN <eq> ELSE <ne> END, recursively.
//   kFlatCase    right-hand chains become one CASE with many arms, and arms of
//                a run of tests on the same attribute that lead to the same
//                result are merged into `a = ANY('{...}'::type[])`, which
//                PostgreSQL evaluates with a hash table from 9 elements on.
//   kSwitchCase  for a predicate whose own attribute has at most
//                kSwitchMaxValues tested values: CASE WHEN a = v1 THEN <P
//                with a = v1> WHEN a = v2 THEN ... ELSE <P with a = none of
//                them> END, each cofactor in the flat form (the tests on a
//                itself are resolved, so rows skip the runs of tests on a deep
//                in the tree); other predicates in the flat form.
// bench/policy measures them; see docs/policy.md for the figures.
// masked_column_sql() emits the flat form with the column itself in place of
// TRUE and NULL in place of FALSE, which saves the outer CASE of mask_sql.
#pragma once

#include <string>
#include <vector>

#include "policy/release_predicate.h"

namespace kanon::policy {

enum class PredicateForm {
  kNestedCase,  // predicate_sql nested, wrapped by mask_sql
  kFlatCase,    // predicate_sql flat, wrapped by mask_sql
  kFlatValue,   // masked_column_sql
  kSwitchCase,  // predicate_sql switch on the own attribute, wrapped by mask_sql
  kCostBased,   // per predicate, kFlatCase or kSwitchCase, whichever costs fewer
                // comparisons on the loaded rows (form_choice.h); only
                // build_from_table/build_table_snapshot resolve it, elsewhere
                // it means kFlatCase
  kFunction,    // a call of kanon_mask.released (predicate_code.h), wrapped by
                // mask_sql; a predicate testing a column the function cannot
                // evaluate exactly gets kFlatCase instead (build_masks)
};

inline constexpr size_t kSwitchMaxValues = 8;

struct SqlColumn {
  std::string name;
  std::string type;  // type name without modifiers, schema-qualified
  // The equality operator, qualified (ColumnInfo::equality); empty means
  // OPERATOR(pg_catalog.=). Nothing kanon writes resolves through the
  // session's search_path.
  std::string equality;

  std::string equals_operator() const {
    return equality.empty() ? std::string("OPERATOR(pg_catalog.=)") : equality;
  }
};

// One arm of the flat form: WHEN attribute = ANY(values) THEN <result>.
struct FlatArm {
  int attribute;
  std::vector<std::string> values;
  uint32_t result;  // node id
};

// The arms of the flat CASE for the chain of "not equal" branches starting at
// `id`; moves `id` to the chain's end (the ELSE).
std::vector<FlatArm> flat_chain(const ReleasePredicate& predicate,
                                const std::vector<SqlColumn>& attributes, uint32_t& id);

// REQUIRES: attributes[i] describes the predicate's attribute i.
std::string predicate_sql(const ReleasePredicate& predicate,
                          const std::vector<SqlColumn>& attributes,
                          PredicateForm form = PredicateForm::kFlatCase);

// The masked column in one expression: the flat form whose TRUE results are
// `value` (the released value: "column", or the column in the form that
// writes equal values alike, ColumnInfo::released_form) and FALSE results
// NULL (same values as mask_sql over predicate_sql).
std::string masked_column_sql(const ReleasePredicate& predicate,
                              const std::vector<SqlColumn>& attributes, const std::string& value,
                              const std::string& type);

// CASE WHEN <predicate> THEN <value> END, or the bare value / typed NULL
// for constant predicates.
std::string mask_sql(const std::string& value, const std::string& type,
                     const std::string& predicate);

}  // namespace kanon::policy
