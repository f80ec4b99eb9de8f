// Keeping CatalogFacts current: an event trigger in the database notifies
// channel `kanon_catalog` after every DDL command that changes a persistent
// object, and PolicyStore's catalog watcher LISTENs on it and re-reads the
// facts (policy_store.h).
#pragma once

#include <string>

namespace pqxx {
class connection_base;
}

namespace kanon::policy {

// The NOTIFY channel the event trigger uses.
inline constexpr const char* kCatalogChannel = "kanon_catalog";

// Creates, idempotently, in schema `kanon`: the plpgsql function
// kanon.catalog_changed() and the event triggers kanon_catalog_ddl (ON
// ddl_command_end) and kanon_catalog_drop (ON sql_drop) that run it. The
// function calls pg_notify('kanon_catalog', <event>) unless every object the
// command touched is temporary, and never fails the user's command.
// Needs a superuser (event triggers do); returns false, with the reason in
// `error` when given, when the account is not one or a statement fails.
bool install_catalog_event_trigger(pqxx::connection_base& conn, std::string* error = nullptr);

}  // namespace kanon::policy
