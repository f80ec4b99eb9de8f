// Keeping CatalogFacts current: an event trigger in the database notifies
// channel `kanon_catalog` after every DDL command that changes a persistent
// object, and PolicyStore's catalog watcher LISTENs on it and re-reads the
// facts (policy_store.h).
#pragma once

#include <chrono>
#include <string>

#include "catalog/kanon_schema.h"

namespace pqxx {
class connection_base;
}

namespace kanon::catalog {

// The NOTIFY channel the event trigger uses.
inline constexpr const char* kCatalogChannel = "kanon_catalog";

// The catalog generation: a sequence the event trigger advances inside the
// DDL's own transaction (sequences are not transactional, so the new value
// is visible before the DDL commits). Restricted statements carry a guard,
// kanon.catalog_is(<generation kanon decided with>), which fails with
// SQLSTATE KN001 when the generation moved (rewriter/catalog_guard.h); or
// kanon_mask.catalog_is, the same check in C (maskfn/catalog_guard.c,
// which hard-codes these names and keys), where maskfn/install.sql put it.
inline constexpr const char* kGenerationSequence = "kanon.catalog_generation";
inline constexpr const char* kGuardSqlState = "KN001";
// The advisory lock (two int4 keys) the trigger holds shared from its bump
// to its commit and the catalog reader takes exclusively before reading the
// generation: facts read under generation G hold every DDL bumped up to G.
inline constexpr int kGenerationLockKey1 = 7306355;
inline constexpr int kGenerationLockKey2 = 2;
// The advisory lock the trigger takes exclusively (before the one above, to
// the end of its transaction) and kanon.catalog_stays(G) takes shared: a DDL
// commits only after the statements holding it ended.
inline constexpr int kStaysLockKey2 = 3;

// Creates, idempotently, in schema `kanon` (with kanon_schema.h's
// create_catalog_watch, which owns the DDL): the sequence above, the guard
// functions kanon.catalog_is(int8) and kanon.catalog_stays(int8) (usable by
// PUBLIC; the second takes the lock of kStaysLockKey2 shared first), the
// plpgsql function
// kanon.catalog_changed() and the event triggers kanon_catalog_ddl (ON
// ddl_command_end) and kanon_catalog_drop (ON sql_drop) that run it. Unless
// every object the command touched is temporary, the function takes the
// lock above, advances the generation and calls pg_notify('kanon_catalog',
// <event>). It takes the lock of kStaysLockKey2 exclusively first, and that
// may fail the user's command (a deadlock, a statement_timeout); nothing
// else it does ever does.
// When it creates them, it then waits (`open_transactions_wait` at most) for
// the transactions open at that moment to end: DDL they ran before the
// trigger existed moved no generation, so a catalog read before they commit
// would miss their objects with nothing to tell (the catalog watcher reads
// right after).
// Needs a superuser (event triggers do); returns false, with the reason in
// `error` when given, when the account is not one or a statement fails.
bool install_catalog_event_trigger(
    pqxx::connection_base& conn, std::string* error = nullptr,
    std::chrono::milliseconds open_transactions_wait = std::chrono::seconds(5));

}  // namespace kanon::catalog
