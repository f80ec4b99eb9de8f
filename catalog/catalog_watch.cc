#include "catalog/catalog_watch.h"

#include <chrono>
#include <pqxx/pqxx>
#include <string>
#include <thread>

namespace kanon::catalog {

namespace {

// Waits, up to `limit`, until the transactions open when it is called have
// ended.
void wait_for_open_transactions(pqxx::connection_base& conn, std::chrono::milliseconds limit) {
  pqxx::nontransaction tx(conn);
  const auto open = tx.exec(
      "SELECT pg_catalog.array_agg(x)::pg_catalog.text "
      "FROM pg_catalog.pg_snapshot_xip(pg_catalog.pg_current_snapshot()) x");
  if (open.empty() || open[0][0].is_null()) return;
  const std::string still_open =
      "SELECT pg_catalog.count(*) FROM pg_catalog.unnest(" + tx.quote(open[0][0].c_str()) +
      "::pg_catalog.xid8[]) x WHERE pg_catalog.pg_xact_status(x) = 'in progress'";
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (tx.exec(still_open)[0][0].as<long>() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

bool install_catalog_event_trigger(pqxx::connection_base& conn, std::string* error,
                                   std::chrono::milliseconds open_transactions_wait) {
  try {
    pqxx::work tx(conn);
    const auto super = tx.exec(
        "SELECT r.rolsuper FROM pg_catalog.pg_roles r "
        "WHERE r.rolname OPERATOR(pg_catalog.=) pg_catalog.current_user()");
    if (super.empty() || std::string(super[0][0].c_str()) != "t") {
      if (error)
        *error =
            "the service account is not a superuser: no event trigger, the catalog is "
            "re-read only at policy refreshes";
      return false;
    }
    // Two kanon instances starting together must not both create the triggers.
    tx.exec("SELECT pg_catalog.pg_advisory_xact_lock(7306355, 1)");
    // Every DDL statement advances the generation and so fails the guard of
    // every restricted statement running: nothing is done when all is in place.
    if (catalog_watch_in_place(tx)) {
      tx.commit();
      return true;
    }
    create_catalog_watch(tx);
    tx.commit();
    // DDL that ran before the trigger existed moved no generation. In a
    // transaction still open now, it commits objects that the catalog read
    // after this call cannot see, and no generation tells sessions that
    // their catalog misses them: wait for those transactions to end (the
    // first install only; a transaction left open delays it 5 s at most).
    wait_for_open_transactions(conn, open_transactions_wait);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

}  // namespace kanon::catalog
