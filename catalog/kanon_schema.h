// Schema `kanon`: the tables kanon keeps in every database it serves (the
// release history, shared snapshots and refresh requests, exports) and the
// version they are at, and the catalog watch's objects (below). This file
// owns all DDL of schema `kanon`; nothing else in kanon creates or alters
// an object in it.
//
// kanon.schema_version has one row per migration applied (version, summary,
// applied_at, applied_by); the schema's version is the largest. A table, not
// a COMMENT ON SCHEMA: recording a version is then an INSERT in the same
// transaction as its DDL (a COMMENT is itself DDL, and fires the catalog
// watch's event trigger), it keeps when and by whom each step was applied,
// and SELECT on it can be granted to PUBLIC (every account kanon runs as
// must read it) without giving anything else.
//
// Version 0 is a database no kanon recorded a version in: an earlier kanon
// created the tables it needed when it first needed them, so any subset of
// version 1's tables may be there, some already with version 2's columns.
// Every statement is therefore idempotent (CREATE TABLE / ADD COLUMN IF NOT
// EXISTS) and runs only when what it adds is missing (SchemaStatement), and
// a database whose recorded version is current but which lacks a table or
// column of it (dropped by hand) gets the statements that add them again.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace pqxx {
class connection_base;
class transaction_base;
}  // namespace pqxx

namespace kanon::catalog {

// The schema of kanon's own tables in every database it serves.
inline constexpr const char* kKanonSchema = "kanon";

// The schema version this kanon writes.
inline constexpr int kKanonSchemaVersion = 2;

// One statement of a migration, with the tables ("kanon.releases") and
// columns ("kanon.releases.row_format") it adds. It runs only when one of
// them is missing, or, adding none (a change to something that exists), when
// its migration's version is above the recorded one: DDL that would change
// nothing is never run (it would still fire the catalog watch, and an ALTER
// needs ownership of the table even when the column is there).
struct SchemaStatement {
  std::string sql;
  std::vector<std::string> adds;
};

// One step: the statements that take the schema from version - 1 to version.
struct SchemaMigration {
  int version = 0;
  const char* summary = "";
  std::vector<SchemaStatement> statements;
};

// Every migration, oldest first; the last one's version is kKanonSchemaVersion.
const std::vector<SchemaMigration>& kanon_schema_migrations();

// Every table of schema kanon at kKanonSchemaVersion with its columns.
const std::map<std::string, std::set<std::string>>& kanon_schema_tables();

// What the catalog says of schema kanon (read with reads only).
struct KanonSchemaState {
  bool schema_exists = false;
  int recorded = 0;  // largest kanon.schema_version.version; 0: none recorded
  // The tables in schema kanon and their columns.
  std::map<std::string, std::set<std::string>> tables;
  // Why kanon may not trust the schema (schema_trust.h); empty when it may.
  std::vector<std::string> distrust;
};

// What ensure_kanon_schema does with a state. Pure.
struct SchemaPlan {
  enum class Action { kNone, kMigrate, kTooNew, kUntrusted };
  Action action = Action::kNone;
  // The statements to run (kMigrate), in order; may be empty when only the
  // version is to be recorded.
  std::vector<std::string> statements;
  // What the current version has and the database lacks, as
  // "kanon.releases" (the whole table) or "kanon.releases.row_format".
  std::vector<std::string> missing;
};
SchemaPlan plan_kanon_schema(const KanonSchemaState& state);

// What ensure_kanon_schema found and did.
struct SchemaOutcome {
  int found = 0;    // the recorded version before
  int version = 0;  // the recorded version after
  // This call took the migration lock and wrote: the plan's DDL (if any)
  // and the versions it recorded.
  bool applied = false;
  // Set when the tables are all in place but no version is recorded and the
  // account may not record it (no CREATE on schema kanon): kanon works, the
  // schema's owner should run kanon once to record the version.
  std::string note;
};

// A database whose schema kanon is newer than this kanon knows, or a
// migration that failed for another reason than a missing privilege.
// Missing privileges throw pqxx::insufficient_privilege (SQLSTATE 42501)
// with a message naming the account, what is missing and what to grant.
class KanonSchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Refuses (KanonSchemaError) a schema kanon may not trust (schema_trust.h).
// Reads the state; when the schema is current and complete, returns having
// run reads only (no DDL, no lock: any DDL would advance the catalog
// generation and fail the guard of every restricted statement running).
// Otherwise takes the advisory lock (7306355, 1) to the end of `tx` (several
// kanon processes may start at once; the catalog watch takes the same lock
// for its DDL), reads the state again, runs the plan's statements and
// records every version above the recorded one, in `tx`. Refuses (KanonSchemaError) a database
// whose recorded version is newer than kKanonSchemaVersion: an older kanon must not write a newer
// schema. REQUIRES: `tx` is READ COMMITTED (it must see what another process committed while it
// waited for the lock). The caller commits.
SchemaOutcome ensure_kanon_schema(pqxx::transaction_base& tx);

// The same in a transaction of its own, committed. REQUIRES: no transaction
// open on `conn`.
SchemaOutcome ensure_kanon_schema(pqxx::connection_base& conn);

// Reads the state (catalog and kanon.schema_version only).
KanonSchemaState read_kanon_schema(pqxx::transaction_base& tx);

// For paths that only read (or update rows of) schema kanon without
// ensure_kanon_schema: throws KanonSchemaError, as ensure_kanon_schema does,
// when the recorded version is newer than this kanon knows (its tables may
// mean something else now), or when kanon may not trust the schema
// (schema_trust.h). Three reads; nothing when the schema is absent.
void check_kanon_schema_version(pqxx::transaction_base& tx);

// The start-up check's sentence about a database's schema kanon (the proxy
// logs it for every database it serves; `too_new` set when this kanon must
// not write it: newer than it knows, or not to be trusted). Pure.
struct SchemaReport {
  std::string sentence;
  bool too_new = false;
};
SchemaReport describe_kanon_schema(const KanonSchemaState& state, const SchemaPlan& plan);

// The catalog watch's objects (catalog_watch.h): the sequence
// kanon.catalog_generation, the functions kanon.catalog_changed(),
// kanon.catalog_is(int8), kanon.catalog_stays(int8) and kanon.serial() with
// their grants, and the event triggers kanon_catalog_ddl and
// kanon_catalog_drop. Not versioned: only a superuser may create event
// triggers, so whether they are there depends on the account kanon runs as,
// not on the schema's version; they are checked by their exact text,
// settings and privileges instead, so a function changed by hand (or by
// another kanon) is replaced.
//
// Whether every one is there as create_catalog_watch makes it, in a schema
// kanon may trust. Reads only.
bool catalog_watch_in_place(pqxx::transaction_base& tx);
// Creates schema kanon when missing, and creates or replaces every object;
// refuses (KanonSchemaError) a schema it may not trust (schema_trust.h).
// REQUIRES: a superuser, the schema lock (7306355, 1) held by `tx`.
void create_catalog_watch(pqxx::transaction_base& tx);

// The bodies of kanon.catalog_is and kanon.catalog_stays as
// create_catalog_watch creates them (prosrc): the catalog reader recognizes
// the guards by them (CatalogFacts).
const std::string& catalog_guard_body();
const std::string& catalog_holding_guard_body();
// The body of kanon.catalog_changed, the event triggers' function: the
// catalog reader recognizes kanon's own event triggers by it.
const std::string& catalog_changed_body();

}  // namespace kanon::catalog
