#include "catalog/catalog_watch.h"

#include <pqxx/pqxx>
#include <string>

namespace kanon::catalog {

bool install_catalog_event_trigger(pqxx::connection_base& conn, std::string* error) {
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
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

}  // namespace kanon::catalog
