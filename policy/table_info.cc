#include "policy/table_info.h"

#include <fmt/format.h>

namespace kanon::policy {
namespace {

[[noreturn]] void fail(const SourceRef& ref, const std::string& what) {
  throw ConfigError(fmt::format("{}:{}: {}: {}", ref.file, ref.line, ref.key, what));
}

void need(const TablePolicy& policy, const TableInfo& info, const std::string& column,
          const SourceRef& ref) {
  if (!info.find(column))
    fail(ref, fmt::format("column '{}' does not exist in {}", column, policy.name()));
}

}  // namespace

const ColumnInfo* TableInfo::find(const std::string& name) const {
  for (const auto& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

void check_against_catalog(const TablePolicy& policy, const TableInfo& info) {
  for (size_t i = 0; i < policy.quasi_identifiers.size(); ++i)
    need(policy, info, policy.quasi_identifiers[i], policy.quasi_identifier_refs[i]);
  for (const auto& d : policy.direct_identifiers) need(policy, info, d.column, d.where);
  if (policy.sensitive) need(policy, info, policy.sensitive->column, policy.sensitive->where);
  for (size_t i = 0; i < policy.person.size(); ++i)
    need(policy, info, policy.person[i], policy.person_refs[i]);
}

}  // namespace kanon::policy
