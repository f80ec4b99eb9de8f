#include "policy/form_choice.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

namespace kanon::policy {
namespace {

using RowValues = std::vector<std::optional<std::string_view>>;

// Cost of one arm for a row, and whether the row matches it.
std::pair<double, bool> arm_cost(const std::vector<std::string>& values,
                                 const std::optional<std::string_view>& v) {
  const auto it = v ? std::find(values.begin(), values.end(), *v) : values.end();
  const bool hit = it != values.end();
  if (values.size() >= 9) return {1.5, hit};
  return {hit ? double(it - values.begin() + 1) : double(values.size()), hit};
}

class FlatCoster {
 public:
  FlatCoster(const ReleasePredicate& p, const std::vector<SqlColumn>& attrs)
      : p_(p), attrs_(attrs) {}

  double cost(const RowValues& row) {
    double c = 0;
    uint32_t id = p_.root();
    while (!ReleasePredicate::constant(id)) {
      const Chain& chain = chain_at(id);
      uint32_t next = chain.tail;
      for (const auto& arm : chain.arms) {
        const auto [cost, hit] = arm_cost(arm.values, row[static_cast<size_t>(arm.attribute)]);
        c += cost;
        if (hit) {
          next = arm.result;
          break;
        }
      }
      id = next;
    }
    return c;
  }

 private:
  struct Chain {
    std::vector<FlatArm> arms;
    uint32_t tail;
  };
  const Chain& chain_at(uint32_t id) {
    auto it = chains_.find(id);
    if (it != chains_.end()) return it->second;
    uint32_t tail = id;
    auto arms = flat_chain(p_, attrs_, tail);
    return chains_.emplace(id, Chain{std::move(arms), tail}).first->second;
  }
  const ReleasePredicate& p_;
  const std::vector<SqlColumn>& attrs_;
  std::map<uint32_t, Chain> chains_;
};

}  // namespace

FormCost form_cost(const ReleasePredicate& predicate, const EncodedTable& table, size_t max_rows) {
  std::vector<SqlColumn> attrs;
  for (const auto& a : table.attributes()) attrs.push_back({a.name, a.type});
  const int own = predicate.attribute();
  const auto values = own < 0 ? std::vector<std::string>{} : predicate.tested_values(own);
  const bool switchable = !values.empty() && values.size() <= kSwitchMaxValues;
  std::vector<ReleasePredicate> cofactors;  // values..., then "none of them"
  if (switchable) {
    for (const auto& v : values) cofactors.push_back(predicate.restricted(own, v));
    cofactors.push_back(predicate.restricted(own, std::nullopt));
  }
  FlatCoster flat(predicate, attrs);
  std::vector<FlatCoster> parts;
  for (const auto& c : cofactors) parts.emplace_back(c, attrs);

  const size_t n = table.distinct_rows();
  const size_t step = std::max<size_t>(1, n / std::max<size_t>(1, max_rows));
  double weight = 0, flat_sum = 0, switch_sum = 0;
  RowValues row(table.attribute_count());
  for (size_t r = 0; r < n; r += step) {
    for (size_t a = 0; a < table.attribute_count(); ++a) {
      const uint32_t code = table.code(r, a);
      row[a] = code == kNullCode
                   ? std::nullopt
                   : std::optional<std::string_view>(table.attribute(a).dictionary.decode(code));
    }
    const double w = double(table.weights()[r]);
    weight += w;
    const double f = flat.cost(row);
    flat_sum += w * f;
    if (!switchable) {
      switch_sum += w * f;
      continue;
    }
    const auto& v = row[static_cast<size_t>(own)];
    const auto it = v ? std::find(values.begin(), values.end(), *v) : values.end();
    const size_t pos = static_cast<size_t>(it - values.begin());
    switch_sum += w * (double(it != values.end() ? pos + 1 : values.size()) + parts[pos].cost(row));
  }
  if (weight == 0) return {};
  return {flat_sum / weight, switch_sum / weight};
}

std::vector<PredicateForm> choose_forms(const std::vector<ReleasePredicate>& predicates,
                                        const EncodedTable& table) {
  std::vector<PredicateForm> out;
  for (const auto& p : predicates) {
    const FormCost c = form_cost(p, table);
    out.push_back(c.switch_ < 0.95 * c.flat ? PredicateForm::kSwitchCase
                                            : PredicateForm::kFlatCase);
  }
  return out;
}

}  // namespace kanon::policy
