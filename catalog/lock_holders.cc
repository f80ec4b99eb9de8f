#include "catalog/lock_holders.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

namespace kanon::catalog {

std::string lock_holders(pqxx::transaction_base& tx, const std::string& lock_condition,
                         bool activity) {
  const auto rows = tx.exec(
      "SELECT a.pid, coalesce(a.usename::pg_catalog.text, '?'), "
      "  coalesce(a.state, 'state not visible'), "
      "  coalesce(pg_catalog.floor(extract(epoch FROM pg_catalog.clock_timestamp() "
      "    OPERATOR(pg_catalog.-) a.xact_start))::pg_catalog.int8, 0) "
      "FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.granted AND l.pid <> pg_catalog.pg_backend_pid() AND (" +
      lock_condition +
      ") "
      "GROUP BY 1, 2, 3, 4 ORDER BY 1");
  std::string out;
  for (const auto& r : rows) {
    out += fmt::format("{}pid {} ({}", out.empty() ? "" : "; ", r[0].as<long>(),
                       r[1].as<std::string>());
    if (activity)
      out += fmt::format(", {}, transaction open {} s", r[2].as<std::string>(), r[3].as<long>());
    out += ')';
  }
  return out;
}

}  // namespace kanon::catalog
