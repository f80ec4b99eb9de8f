// TableMasks: the SQL expression of every column of a protected table as a
// restricted user may see it, in the table's column order:
//   quasi-identifier   CASE WHEN <release predicate> THEN "col" END
//   direct identifier  NULL::type or 'constant'::type
//   other columns      "col" (passed through)
// masked_relation() wraps them as a derived table the rewriter splices in
// place of a reference to the table. Plain value; shareable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/predicate_sql.h"
#include "policy/release_predicate.h"
#include "policy/table_info.h"
#include "policy/table_policy.h"

namespace kanon::policy {

struct ColumnMask {
  std::string column;
  std::string type;        // with modifiers
  std::string expression;  // SQL yielding the masked value
  enum class Role { kQuasiIdentifier, kDirectIdentifier, kSensitive, kOther } role;
  // A quasi-identifier whose mask is `CASE WHEN <release_test> THEN "col"
  // END` over a column compared as PostgreSQL's built-in integer or text
  // types compare (integer, smallint, bigint, text, character varying; no
  // released form, pg_catalog's `=`): the release predicate. The rewriter
  // then decides a restriction `col <op> <constant>` on the raw value before
  // the predicate (rewriter/restriction_filter.h). Empty otherwise.
  std::string release_test;
  // release_test set: the column's type, for the types a restriction's
  // constant or parameter may have (rewriter/restriction_filter.h).
  enum class Compared : uint8_t { kNone, kSmallint, kInteger, kBigint, kText, kVarchar };
  Compared compared = Compared::kNone;
  bool holds_integers() const {
    return compared == Compared::kSmallint || compared == Compared::kInteger ||
           compared == Compared::kBigint;
  }

  // expr AS "col": the column's item in a select list.
  std::string select_item() const;
};

struct TableMasks {
  std::vector<ColumnMask> columns;
  // Some quasi-identifier's mask is a CASE expression PostgreSQL's
  // interpreter evaluates test by test (a SQL form, not a constant): such
  // statements run serially (rewriter/catalog_guard.h, the serial marker).
  bool interpreted = false;
  // Some mask calls kanon_mask.released (PredicateForm::kFunction).
  bool calls_function = false;

  // expr AS "col", ... (every column, table order).
  std::string select_list() const;
  // (SELECT <select_list> FROM "schema"."table")
  std::string masked_relation(const std::string& schema, const std::string& table) const;
};

// REQUIRES: predicates[i] belongs to policy.quasi_identifiers[i]; every
// column of the policy exists in `info`.
TableMasks build_masks(const TablePolicy& policy, const TableInfo& info,
                       const std::vector<ReleasePredicate>& predicates,
                       PredicateForm form = PredicateForm::kFlatCase);
// One form per predicate (e.g. from choose_forms).
TableMasks build_masks(const TablePolicy& policy, const TableInfo& info,
                       const std::vector<ReleasePredicate>& predicates,
                       const std::vector<PredicateForm>& forms);

}  // namespace kanon::policy
