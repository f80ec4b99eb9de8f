#include "policy/table_info.h"

#include <fmt/format.h>

namespace kanon::policy {

std::string ColumnInfo::released(const std::string& expression) const {
  if (released_form.empty()) return expression;
  std::string out;
  size_t from = 0;
  for (size_t at = released_form.find("{}"); at != std::string::npos;
       from = at + 2, at = released_form.find("{}", from))
    out += released_form.substr(from, at - from) + expression;
  return out + released_form.substr(from);
}
namespace {

[[noreturn]] void fail(const SourceRef& ref, const std::string& what) {
  throw ConfigError(fmt::format("{}:{}: {}: {}", ref.file, ref.line, ref.key, what));
}

void need(const TablePolicy& policy, const TableInfo& info, const std::string& column,
          const SourceRef& ref) {
  if (!info.find(column))
    fail(ref, fmt::format("column '{}' does not exist in {}", column, policy.name()));
}

// What a restricted session changes to make a literal of `type` mean another
// value, and what to use instead.
std::string setting_advice(const std::string& type) {
  if (type == "pg_catalog.money")
    return "its text form follows the session's lc_monetary, which a restricted session may "
           "change; use numeric";
  return "its text form follows the session's search_path, which a restricted session may "
         "change; use oid";
}

}  // namespace

const ColumnInfo* TableInfo::find(const std::string& name) const {
  for (const auto& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

void check_against_catalog(const TablePolicy& policy, const TableInfo& info) {
  for (size_t i = 0; i < policy.quasi_identifiers.size(); ++i) {
    const std::string& q = policy.quasi_identifiers[i];
    need(policy, info, q, policy.quasi_identifier_refs[i]);
    const ColumnInfo& c = *info.find(q);
    if (!c.setting_dependent.empty())
      fail(policy.quasi_identifier_refs[i],
           fmt::format("quasi-identifier '{}' is of type {}{}: {}", q, c.type,
                       c.setting_dependent == "pg_catalog." + c.type
                           ? ""
                           : " (holding " + c.setting_dependent + ")",
                       setting_advice(c.setting_dependent)));
    if (!c.not_canonical.empty())
      fail(policy.quasi_identifier_refs[i],
           fmt::format("quasi-identifier '{}' is of type {}, {}: rows equal under its `=` may "
                       "hold different values, and a released value would show each row's own, "
                       "so that a value few rows hold singles them out; kanon cannot write one "
                       "value for them",
                       q, c.full_type, c.not_canonical));
  }
  for (const auto& d : policy.direct_identifiers) need(policy, info, d.column, d.where);
  if (policy.sensitive) need(policy, info, policy.sensitive->column, policy.sensitive->where);
  // Columns whose raw values restricted sessions never read.
  const auto hidden = [&](const std::string& column) -> const char* {
    for (const auto& q : policy.quasi_identifiers)
      if (q == column) return "quasi-identifier";
    for (const auto& d : policy.direct_identifiers)
      if (d.column == column) return "direct identifier";
    return nullptr;
  };
  for (const auto& g : info.generated) {
    if (hidden(g.column)) continue;
    for (const auto& from : g.from)
      if (const char* what = hidden(from))
        fail(policy.where,
             fmt::format("column '{}' of {} is generated from {} '{}': restricted sessions "
                         "would read it raw; list it as a quasi-identifier or a direct "
                         "identifier, or drop it",
                         g.column, policy.name(), what, from));
  }
  for (const auto& k : info.partition_keys) {
    if (k.expression)
      fail(policy.where,
           fmt::format("{} is partitioned by an expression: kanon cannot tell which columns "
                       "it reads, and the partition a row is in shows their raw values",
                       k.relation));
    for (const auto& column : k.columns)
      if (const char* what = hidden(column))
        fail(policy.where,
             fmt::format("{} is partitioned by {} '{}': the partition a row is in (EXPLAIN "
                         "ANALYZE's rows per partition, the order rows come in) shows its raw "
                         "value; partition by another column",
                         k.relation, what, column));
  }
  for (size_t i = 0; i < policy.person.size(); ++i)
    need(policy, info, policy.person[i], policy.person_refs[i]);
}

}  // namespace kanon::policy
