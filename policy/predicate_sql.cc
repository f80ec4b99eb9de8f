#include "policy/predicate_sql.h"

#include <algorithm>

#include "policy/array_value.h"
#include "policy/sql_text.h"

namespace kanon::policy {

std::vector<FlatArm> flat_chain(const ReleasePredicate& p, const std::vector<SqlColumn>& attrs,
                                uint32_t& id) {
  std::vector<FlatArm> arms;
  size_t run_start = 0;  // first arm of the current same-attribute run
  while (!ReleasePredicate::constant(id)) {
    const auto& t = p.test(id);
    if (!arms.empty() && arms[run_start].attribute != t.attribute) run_start = arms.size();
    // Tests on one attribute exclude each other, so within a run arms with
    // the same result can be merged whatever their order.
    // Array-typed columns keep one arm per value: `= ANY` would compare
    // elements, not whole arrays.
    const bool mergeable = !attrs[static_cast<size_t>(t.attribute)].type.ends_with("[]");
    auto same =
        !mergeable ? arms.end()
                   : std::find_if(arms.begin() + static_cast<std::ptrdiff_t>(run_start), arms.end(),
                                  [&](const FlatArm& a) { return a.result == t.if_equal; });
    if (same != arms.end()) {
      same->values.push_back(t.value);
    } else {
      arms.push_back({t.attribute, {t.value}, t.if_equal});
    }
    id = t.if_not;
  }
  return arms;
}

namespace {

class Emitter {
 public:
  Emitter(const ReleasePredicate& p, const std::vector<SqlColumn>& attrs, PredicateForm form,
          std::string when_true = "true", std::string when_false = "false")
      : p_(p),
        attrs_(attrs),
        form_(form),
        true_(std::move(when_true)),
        false_(std::move(when_false)) {
    for (const auto& a : attrs_) quoted_.push_back(quote_identifier(a.name));
  }

  void emit(uint32_t id, std::string& out) {
    if (id == ReleasePredicate::kTrue) {
      out += true_;
    } else if (id == ReleasePredicate::kFalse) {
      out += false_;
    } else if (form_ == PredicateForm::kNestedCase) {
      const auto& t = p_.test(id);
      out += "CASE WHEN ";
      equals(t.attribute, {t.value}, out);
      out += " THEN ";
      emit(t.if_equal, out);
      out += " ELSE ";
      emit(t.if_not, out);
      out += " END";
    } else {
      flat(id, out);
    }
  }

 private:
  void equals(int attribute, const std::vector<std::string>& values, std::string& out) const {
    const auto& col = attrs_[static_cast<size_t>(attribute)];
    if (values.size() == 1 && col.type.ends_with("[]")) {
      out += array_equals(quoted_[static_cast<size_t>(attribute)], col.equals_operator(), values[0],
                          col.type);
      return;
    }
    out += quoted_[static_cast<size_t>(attribute)];
    out += ' ';
    out += col.equals_operator();
    if (values.size() == 1) {
      out += ' ';
      out += typed_literal(values[0], col.type);
    } else {
      out += " ANY (";
      out += typed_array_literal(values, col.type);
      out += ")";
    }
  }

  void flat(uint32_t id, std::string& out) {
    const std::vector<FlatArm> arms = flat_chain(p_, attrs_, id);
    out += "CASE";
    for (const auto& arm : arms) {
      out += " WHEN ";
      equals(arm.attribute, arm.values, out);
      out += " THEN ";
      emit(arm.result, out);
    }
    out += " ELSE ";
    emit(id, out);  // flat_chain moved id to the end of the chain
    out += " END";
  }

  const ReleasePredicate& p_;
  const std::vector<SqlColumn>& attrs_;
  const PredicateForm form_;
  const std::string true_, false_;
  std::vector<std::string> quoted_;
};

std::string flat_sql(const ReleasePredicate& p, const std::vector<SqlColumn>& attrs) {
  std::string out;
  Emitter(p, attrs, PredicateForm::kFlatCase).emit(p.root(), out);
  return out;
}

// CASE over the predicate's own attribute, one flat cofactor per arm; arms
// with the same cofactor share an `= ANY` array, arms equal to the ELSE
// cofactor are left out (the ELSE gives the same value). The arms test one
// attribute, so at most one matches and their order does not matter.
std::string switch_sql(const ReleasePredicate& p, const std::vector<SqlColumn>& attrs) {
  const int a = p.attribute();
  const auto values = a < 0 ? std::vector<std::string>{} : p.tested_values(a);
  if (values.empty() || values.size() > kSwitchMaxValues) return flat_sql(p, attrs);
  const SqlColumn& col = attrs[static_cast<size_t>(a)];
  const bool mergeable = !col.type.ends_with("[]");
  const std::string otherwise = flat_sql(p.restricted(a, std::nullopt), attrs);
  std::vector<std::pair<std::string, std::vector<std::string>>> arms;  // sql -> values
  for (const auto& v : values) {
    std::string sql = flat_sql(p.restricted(a, v), attrs);
    if (sql == otherwise) continue;
    auto same =
        std::find_if(arms.begin(), arms.end(), [&](const auto& x) { return x.first == sql; });
    if (same != arms.end() && mergeable) {
      same->second.push_back(v);
    } else {
      arms.push_back({std::move(sql), {v}});
    }
  }
  if (arms.empty()) return otherwise;
  std::string out = "CASE";
  for (const auto& [sql, vals] : arms) {
    out += " WHEN ";
    if (vals.size() == 1 && !mergeable)
      out += array_equals(quote_identifier(col.name), col.equals_operator(), vals[0], col.type);
    else
      out += quote_identifier(col.name) + " " + col.equals_operator() +
             (vals.size() == 1 ? " " + typed_literal(vals[0], col.type)
                               : " ANY (" + typed_array_literal(vals, col.type) + ")");
    out += " THEN " + sql;
  }
  return out + " ELSE " + otherwise + " END";
}

}  // namespace

std::string predicate_sql(const ReleasePredicate& predicate,
                          const std::vector<SqlColumn>& attributes, PredicateForm form) {
  if (form == PredicateForm::kSwitchCase) return switch_sql(predicate, attributes);
  std::string out;
  Emitter(predicate, attributes, form).emit(predicate.root(), out);
  return out;
}

std::string masked_column_sql(const ReleasePredicate& predicate,
                              const std::vector<SqlColumn>& attributes, const std::string& value,
                              const std::string& type) {
  if (predicate.root() == ReleasePredicate::kTrue) return value;
  if (predicate.root() == ReleasePredicate::kFalse) return "NULL::" + type;
  std::string out;
  Emitter(predicate, attributes, PredicateForm::kFlatCase, value, "NULL")
      .emit(predicate.root(), out);
  return out;
}

std::string mask_sql(const std::string& value, const std::string& type,
                     const std::string& predicate) {
  if (predicate == "true") return value;
  if (predicate == "false") return "NULL::" + type;
  return "CASE WHEN " + predicate + " THEN " + value + " END";
}

}  // namespace kanon::policy
