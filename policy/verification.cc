#include "policy/verification.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "policy/sql_text.h"

namespace kanon::policy {

std::string verification_query(const TableSnapshot& snapshot) {
  // The snapshot's compiled masks over the base table (inline), or the
  // masked copy's columns as they are (materialized): what restricted users
  // read in either mode.
  const bool copy = !snapshot.materialized_name.empty();
  std::string select, groups, released;
  size_t i = 0;
  for (const auto& c : snapshot.masks.columns) {
    if (c.role != ColumnMask::Role::kQuasiIdentifier) continue;
    const std::string alias = fmt::format("q{}", ++i);
    select += fmt::format("{}{} AS {}", select.empty() ? "" : ", ",
                          copy ? quote_identifier(c.column) : c.expression, alias);
    groups += (groups.empty() ? "" : ", ") + alias;
    released += fmt::format("{}({} IS NOT NULL)::int", released.empty() ? "" : " + ", alias);
  }
  return fmt::format(
      "SELECT count(*), coalesce(min(n), 0), coalesce(sum(n), 0), coalesce(sum(cells), 0), "
      "count(*) FILTER (WHERE n < {}) FROM (SELECT count(*) AS n, sum({}) AS cells FROM "
      "(SELECT {} FROM {}) AS m GROUP BY {}) AS g",
      snapshot.policy.k, released, select,
      copy ? snapshot.materialized_name
           : qualified_name(snapshot.policy.schema, snapshot.policy.table),
      groups);
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
