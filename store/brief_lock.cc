#include "store/brief_lock.h"

#include <fmt/format.h>

#include <pqxx/pqxx>
#include <stdexcept>
#include <thread>

#include "catalog/lock_holders.h"

namespace kanon::store {

namespace {

constexpr const char* kLockNotAvailable = "55P03";

}  // namespace

void exec_locking_briefly(pqxx::dbtransaction& tx, const std::string& sql,
                          const std::string& relation, std::string_view purpose,
                          const BriefLockWait& wait) {
  const std::string before =
      tx.exec1("SELECT pg_catalog.current_setting('lock_timeout')")[0].as<std::string>();
  const auto started = std::chrono::steady_clock::now();
  for (int tries = 1;; ++tries) {
    try {
      // Plain exec only: libpqxx 6 opens the savepoint at a subtransaction's
      // first exec(), and exec_params() would run before it, outside.
      pqxx::subtransaction sub(tx, "kanon_brief_lock");
      sub.exec(fmt::format("SELECT pg_catalog.set_config('lock_timeout', '{}ms', true)",
                           std::max<long>(1, wait.attempt.count())));
      sub.exec(sql);
      sub.exec("SELECT pg_catalog.set_config('lock_timeout', " + sub.quote(before) + ", true)");
      sub.commit();
      return;
    } catch (const pqxx::sql_error& e) {
      // The savepoint rolled back, and lock_timeout with it.
      if (e.sqlstate() != kLockNotAvailable) throw;
    }
    if (std::chrono::steady_clock::now() - started + wait.pause < wait.deadline) {
      std::this_thread::sleep_for(wait.pause);
      continue;
    }
    const std::string holders = catalog::lock_holders(
        tx, "l.locktype = 'relation' AND l.relation = pg_catalog.to_regclass(" +
                tx.quote(relation) + ")::pg_catalog.oid");
    throw std::runtime_error(fmt::format(
        "{}: {} is read by sessions whose transactions stay open, and it could not be "
        "replaced in {} tries over {} s without making its other readers wait: {}. They "
        "keep reading the previous release; end those transactions (e.g. "
        "idle_in_transaction_session_timeout for restricted logins) and refresh again",
        purpose, relation, tries,
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started)
            .count(),
        holders.empty() ? "no session holds it now" : holders));
  }
}

}  // namespace kanon::store
