#include "policy/table_masks.h"

#include <algorithm>

#include "policy/predicate_code.h"
#include "policy/sql_text.h"

namespace kanon::policy {

std::string ColumnMask::select_item() const {
  return expression + " AS " + quote_identifier(column);
}

std::string TableMasks::select_list() const {
  std::string s;
  for (const auto& c : columns) {
    if (!s.empty()) s += ", ";
    s += c.select_item();
  }
  return s;
}

std::string TableMasks::masked_relation(const std::string& schema, const std::string& table) const {
  return "(SELECT " + select_list() + " FROM " + qualified_name(schema, table) + ")";
}

namespace {

// What a released row shows: the column, or the column in the form that
// writes values equal under its `=` alike (ColumnInfo::released_form), cast
// back to the column's type.
std::string released_value(const ColumnInfo& col, const std::string& type) {
  const std::string quoted = quote_identifier(col.name);
  if (col.released_form.empty()) return quoted;
  return "(" + col.released(quoted) + ")::" + type;
}

// Values of the column compare under pg_catalog's operators for integers or
// text, whose functions are leakproof and strict: a restriction on it can be
// decided on the raw value first (ColumnMask::release_test). kNone otherwise.
ColumnMask::Compared plainly_compared(const ColumnInfo& col) {
  using C = ColumnMask::Compared;
  static const std::pair<const char*, C> kTypes[] = {{"smallint", C::kSmallint},
                                                     {"integer", C::kInteger},
                                                     {"bigint", C::kBigint},
                                                     {"text", C::kText},
                                                     {"character varying", C::kVarchar}};
  if (!col.released_form.empty() || !col.setting_dependent.empty() ||
      !(col.equality.empty() || col.equality == "OPERATOR(pg_catalog.=)"))
    return C::kNone;
  for (const auto& [name, compared] : kTypes)
    if (col.type == name) return compared;
  return C::kNone;
}

}  // namespace

TableMasks build_masks(const TablePolicy& policy, const TableInfo& info,
                       const std::vector<ReleasePredicate>& predicates, PredicateForm form) {
  return build_masks(policy, info, predicates, std::vector<PredicateForm>(predicates.size(), form));
}

TableMasks build_masks(const TablePolicy& policy, const TableInfo& info,
                       const std::vector<ReleasePredicate>& predicates,
                       const std::vector<PredicateForm>& forms) {
  std::vector<SqlColumn> attrs;
  for (const auto& q : policy.quasi_identifiers) {
    const ColumnInfo* c = info.find(q);
    attrs.push_back({q, c->written_type(), c->equality});
  }
  TableMasks masks;
  for (const auto& col : info.columns) {
    const std::string& type = col.written_full_type();
    ColumnMask m{col.name, type, quote_identifier(col.name), ColumnMask::Role::kOther};
    const auto qi =
        std::find(policy.quasi_identifiers.begin(), policy.quasi_identifiers.end(), col.name);
    if (qi != policy.quasi_identifiers.end()) {
      const size_t i = static_cast<size_t>(qi - policy.quasi_identifiers.begin());
      m.role = ColumnMask::Role::kQuasiIdentifier;
      PredicateForm form =
          forms[i] == PredicateForm::kCostBased ? PredicateForm::kFlatCase : forms[i];
      std::optional<std::string> call;
      if (form == PredicateForm::kFunction &&
          !(call = function_predicate_sql(predicates[i], attrs)))
        form = PredicateForm::kFlatCase;
      const std::string value = released_value(col, type);
      if (form == PredicateForm::kFlatValue) {
        m.expression = masked_column_sql(predicates[i], attrs, value, type);
      } else {
        const std::string test =
            form == PredicateForm::kFunction ? *call : predicate_sql(predicates[i], attrs, form);
        m.expression = mask_sql(value, type, test);
        const auto compared = plainly_compared(col);
        if (test != "true" && test != "false" && compared != ColumnMask::Compared::kNone) {
          m.release_test = test;
          m.compared = compared;
        }
      }
      if (!ReleasePredicate::constant(predicates[i].root()))
        (form == PredicateForm::kFunction ? masks.calls_function : masks.interpreted) = true;
    }
    for (const auto& d : policy.direct_identifiers) {
      if (d.column != col.name) continue;
      m.role = ColumnMask::Role::kDirectIdentifier;
      m.expression = d.constant ? typed_literal(*d.constant, type) : "NULL::" + type;
    }
    if (policy.sensitive && policy.sensitive->column == col.name)
      m.role = ColumnMask::Role::kSensitive;
    masks.columns.push_back(std::move(m));
  }
  return masks;
}

}  // namespace kanon::policy
