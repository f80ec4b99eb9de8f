#include "store/brief_lock.h"

#include <fmt/format.h>

#include <pqxx/pqxx>
#include <stdexcept>
#include <thread>

namespace kanon::store {

namespace {

constexpr const char* kLockNotAvailable = "55P03";

// "pid 9030 (analyst, idle in transaction, transaction open 42 s)", one per
// session holding a granted lock on `relation`, or why none is named.
std::string holders(pqxx::dbtransaction& tx, const std::string& relation) {
  const auto rows = tx.exec_params(
      "SELECT a.pid, coalesce(a.usename::pg_catalog.text, '?'), "
      "  coalesce(a.state, 'state not visible'), "
      "  coalesce(pg_catalog.floor(extract(epoch FROM pg_catalog.clock_timestamp() "
      "    OPERATOR(pg_catalog.-) a.xact_start))::pg_catalog.int8, 0) "
      "FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.locktype = 'relation' AND l.granted "
      "  AND l.relation = pg_catalog.to_regclass($1)::pg_catalog.oid "
      "  AND l.pid <> pg_catalog.pg_backend_pid() "
      "GROUP BY 1, 2, 3, 4 ORDER BY 1",
      relation);
  if (rows.empty()) return "no session holds it now";
  std::string out;
  for (const auto& r : rows)
    out += fmt::format("{}pid {} ({}, {}, transaction open {} s)", out.empty() ? "" : "; ",
                       r[0].as<long>(), r[1].as<std::string>(), r[2].as<std::string>(),
                       r[3].as<long>());
  return out;
}

}  // namespace

void exec_locking_briefly(pqxx::dbtransaction& tx, const std::string& sql,
                          const std::string& relation, std::string_view purpose,
                          const BriefLockWait& wait) {
  const std::string before =
      tx.exec1("SELECT pg_catalog.current_setting('lock_timeout')")[0].as<std::string>();
  const auto started = std::chrono::steady_clock::now();
  for (int tries = 1;; ++tries) {
    try {
      pqxx::subtransaction sub(tx, "kanon_brief_lock");
      sub.exec_params("SELECT pg_catalog.set_config('lock_timeout', $1, true)",
                      fmt::format("{}ms", std::max<long>(1, wait.attempt.count())));
      sub.exec(sql);
      sub.exec_params("SELECT pg_catalog.set_config('lock_timeout', $1, true)", before);
      sub.commit();
      return;
    } catch (const pqxx::sql_error& e) {
      // The savepoint rolled back, and lock_timeout with it.
      if (e.sqlstate() != kLockNotAvailable) throw;
    }
    if (std::chrono::steady_clock::now() - started + wait.pause >= wait.deadline)
      throw std::runtime_error(fmt::format(
          "{}: {} is read by sessions whose transactions stay open, and it could not be "
          "replaced in {} tries over {} s without making its other readers wait: {}. They "
          "keep reading the previous release; end those transactions (e.g. "
          "idle_in_transaction_session_timeout for restricted logins) and refresh again",
          purpose, relation, tries,
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                           started)
              .count(),
          holders(tx, relation)));
    std::this_thread::sleep_for(wait.pause);
  }
}

}  // namespace kanon::store
