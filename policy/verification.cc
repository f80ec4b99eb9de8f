#include "policy/verification.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "policy/materializer.h"
#include "policy/sql_text.h"
#include "policy/table_loader.h"

namespace kanon::policy {

std::string verification_query(const TableSnapshot& snapshot) {
  // The snapshot's compiled masks over the base table (inline), or the
  // masked copy's columns as they are (materialized): what restricted users
  // read in either mode. With `person:`, a combination's size is its
  // distinct persons; when a person column is a direct identifier (masked
  // in the copy) they are read from the base table through the copy's own
  // select list: the masks, and the holds of the last release.
  const auto& policy = snapshot.policy;
  bool person_masked = false;
  for (const auto& d : policy.direct_identifiers)
    for (const auto& c : policy.person) person_masked = person_masked || d.column == c;
  const bool materialized = !snapshot.materialized_name.empty();
  const bool copy = materialized && !person_masked;
  const std::string held = materialized && !copy ? held_condition(snapshot) : std::string();
  std::string select, groups, released;
  size_t i = 0;
  for (const auto& c : snapshot.masks.columns) {
    if (c.role != ColumnMask::Role::kQuasiIdentifier) continue;
    const std::string alias = fmt::format("q{}", ++i);
    std::string value = copy ? quote_identifier(c.column) : c.expression;
    if (!held.empty()) value = fmt::format("CASE WHEN {} THEN NULL ELSE {} END", held, value);
    select += fmt::format("{}{} AS {}", select.empty() ? "" : ", ", value, alias);
    groups += (groups.empty() ? "" : ", ") + alias;
    released += fmt::format("{}({} IS NOT NULL)::int", released.empty() ? "" : " + ", alias);
  }
  std::string size = "pg_catalog.count(*)";
  if (!policy.person.empty()) {
    select += ", " + person_expression(policy) + " AS person";
    size = "pg_catalog.count(DISTINCT person)";
  }
  return fmt::format(
      "SELECT count(*), coalesce(min(n), 0), coalesce(sum(r), 0), coalesce(sum(cells), 0), "
      "count(*) FILTER (WHERE n < {}) FROM (SELECT {} AS n, pg_catalog.count(*) AS r, sum({}) "
      "AS cells FROM (SELECT {} FROM {}) AS m GROUP BY {}) AS g",
      policy.k, size, released, select,
      copy ? snapshot.materialized_name : qualified_name(policy.schema, policy.table), groups);
}

VerificationReport verify_table(pqxx::connection_base& conn, const TableSnapshot& snapshot) {
  pqxx::read_transaction tx(conn);
  tx.exec("SET LOCAL jit = off");
  const auto r = tx.exec1(verification_query(snapshot));
  VerificationReport rep;
  rep.groups = r[0].as<uint64_t>();
  rep.min_group = r[1].as<uint64_t>();
  rep.rows = r[2].as<uint64_t>();
  const double cells = r[3].as<double>();
  rep.groups_below_k = r[4].as<uint64_t>();
  const double total = double(rep.rows) * double(snapshot.policy.quasi_identifiers.size());
  rep.released_fraction = total > 0 ? cells / total : 0.0;
  return rep;
}

}  // namespace kanon::policy
