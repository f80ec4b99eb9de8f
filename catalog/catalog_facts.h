// CatalogFacts: what one database's catalog says about every object a
// restricted statement can name or reach, read in one pass over kanon's
// service connection (read_catalog_facts). Raw facts only, no judgement:
// rewriter/object_catalog.h decides what reaches a protected table.
//
// Plain value, immutable once read; shared between threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/table_catalog.h"

namespace pqxx {
class connection_base;
class transaction_base;
}  // namespace pqxx

namespace kanon::catalog {

struct RelationFacts {
  uint32_t oid = 0;
  std::string schema;
  std::string name;
  // pg_class.relkind: 'r' table, 'p' partitioned table, 'v' view,
  // 'm' materialized view, 'f' foreign table, 'S' sequence, 'c' composite type.
  char kind = 'r';
  std::vector<policy::ColumnInfo> columns;  // attnum order, dropped columns left out
  std::vector<uint32_t> parents;            // pg_inherits: direct parents (tables and partitions)
  // Views and materialized views: the definition as pg_get_viewdef prints it
  // with an empty search_path (every name schema-qualified), without the
  // trailing semicolon; the relations and functions it reads (pg_depend of
  // its _RETURN rule, the relation itself left out).
  std::string definition;
  std::vector<uint32_t> reads_relations;
  std::vector<uint32_t> reads_functions;
  bool security_barrier = false;
  bool security_invoker = false;
  std::string check_option;  // "", "local" or "cascaded"
  // Row-level security: the relations and functions its policies' USING and
  // WITH CHECK expressions reference (pg_depend of pg_policy). They run when
  // the relation is read, whether or not row security is enabled for it.
  std::vector<uint32_t> policy_relations;
  std::vector<uint32_t> policy_functions;
  // What runs when the relation is written: the functions of its triggers and
  // of their WHEN conditions (pg_trigger, internal constraint triggers left
  // out), the relations and functions its non-SELECT rules (pg_rewrite
  // ev_type 2..4) reference, the functions of its column defaults and
  // generated columns, CHECK and exclusion constraints and index expressions
  // and predicates, the tables its foreign keys check, and the tables whose
  // foreign keys cascade (ON DELETE/UPDATE CASCADE, SET NULL, SET DEFAULT)
  // from it.
  std::vector<uint32_t> write_relations;
  std::vector<uint32_t> write_functions;
  uint32_t foreign_server = 0;  // foreign tables: pg_foreign_table.ftserver
  // Its indexes and the columns each orders or filters rows by: its key
  // columns and the columns its key expressions and predicate read (not
  // INCLUDE columns). A scan through one returns rows in the order of raw
  // values, and a partial index's row count (pg_class.reltuples) counts
  // raw values.
  struct Index {
    std::string name;  // "schema.index"
    std::vector<std::string> columns;
    bool partial = false;  // has a predicate (WHERE)
  };
  std::vector<Index> indexes;
};

struct FunctionFacts {
  uint32_t oid = 0;
  std::string schema;
  std::string name;
  std::string language;   // pg_language.lanname: "sql", "plpgsql", "internal", "c", ...
  char kind = 'f';        // pg_proc.prokind: 'f' function, 'p' procedure, 'a' aggregate, 'w' window
  bool builtin = false;   // oid < 16384 (FirstNormalObjectId): shipped with the server
  std::string extension;  // the extension it belongs to (pg_depend deptype 'e'), if any
  bool security_definer = false;
  // Returns trigger or event_trigger: PostgreSQL runs it only as a trigger,
  // never when called, so EXECUTE on it is no way in of its own.
  bool trigger = false;
  // kanon.catalog_is or kanon.catalog_stays as install_catalog_event_trigger
  // makes them (their plpgsql bodies, invoker's rights, no settings), or
  // kanon_mask.catalog_is, catalog_stays, copy_current or snapshot_sees as
  // maskfn/install.sql makes them (LANGUAGE c, their symbols): they read the
  // catalog generation (and take an advisory lock), a pg_class row or the
  // snapshot and nothing else, so they reach nothing (catalog_watch.h).
  bool kanon_guard = false;
  // A constructor PostgreSQL made with a range type (CREATE TYPE ... AS
  // RANGE, which any role may run): LANGUAGE internal, its code the server's
  // own range_constructor2/3 or multirange_constructor0/1/2 (pg_proc.prosrc
  // names the code; only a superuser creates other internal functions). It
  // reaches nothing, like the built-in functions; the range <-> multirange
  // cast runs one.
  bool type_constructor = false;
  // pg_proc.provolatile: 'i' immutable, 's' stable, 'v' volatile. SQL
  // functions that are not volatile cannot write (PostgreSQL refuses
  // INSERT/UPDATE/DELETE/MERGE in them).
  char volatility = 'v';
  // SQL functions with a string body: prosrc. Empty for BEGIN ATOMIC /
  // RETURN bodies (atomic), whose reads come from pg_depend instead.
  std::string body;
  bool atomic = false;
  std::vector<uint32_t> reads_relations;  // atomic bodies: pg_depend
  // Atomic bodies and the arguments' DEFAULT expressions: pg_depend and the
  // stored expressions.
  std::vector<uint32_t> reads_functions;
  // Aggregates: their support functions (transition, final, combine, ...).
  std::vector<uint32_t> support_functions;
};

// An operator created after initdb (oid >= 16384) and the function it runs.
struct OperatorFacts {
  uint32_t oid = 0;
  std::string schema;
  std::string name;       // the symbol, e.g. "==="
  uint32_t function = 0;  // pg_operator.oprcode
  uint32_t left = 0;      // pg_operator.oprleft (0: a prefix operator)
  uint32_t right = 0;     // pg_operator.oprright
};

// An event trigger that fires in ordinary sessions (pg_event_trigger,
// evtenabled 'O' or 'A'; 'R' ones fire only under session_replication_role
// replica, which only a superuser may set). PostgreSQL runs its function on
// the DDL of every session, restricted ones included, with the session's
// rights (the owner's when SECURITY DEFINER) and without asking for EXECUTE.
struct EventTriggerFacts {
  std::string name;
  uint32_t function = 0;
  // kanon's own catalog watch (kanon_catalog_ddl, kanon_catalog_drop:
  // kanon.catalog_changed as create_catalog_watch makes it, its exact
  // body): it bumps the generation and notifies, and reads no table.
  bool kanon_watch = false;

  bool operator==(const EventTriggerFacts&) const = default;
};

struct CatalogFacts {
  std::string database;
  // Every relation outside pg_catalog, information_schema, pg_toast and
  // temporary schemas, and every function (pg_catalog's included: BI tools
  // call them, and a built-in function is safe only when kanon knows it).
  std::vector<RelationFacts> relations;
  std::vector<FunctionFacts> functions;
  // Code PostgreSQL runs without a function name in the SQL text: operators
  // and casts (pg_cast.castfunc) created after initdb (oid >= 16384). A
  // reference to an operator in a view or a BEGIN ATOMIC body already lands
  // in reads_functions as its function.
  std::vector<OperatorFacts> operators;
  std::vector<uint32_t> cast_functions;
  // Code of types created after initdb that PostgreSQL runs on their values:
  // the functions domains' CHECK constraints and DEFAULT expressions call
  // (pg_depend and the stored expression, so built-in ones too), and range
  // types' subtype_diff and canonical functions. PostgreSQL runs them
  // whenever a value becomes one of the domain (a cast, a column left out of
  // an INSERT), when it plans or indexes a range, with neither the
  // function's nor always the type's name in the text.
  std::vector<uint32_t> type_functions;
  // Event triggers that fire in ordinary sessions, by name: code PostgreSQL
  // runs on a restricted session's DDL (rewriter/rewrite_plan.cc).
  std::vector<EventTriggerFacts> event_triggers;
  // Relations outside `relations` (pg_catalog's, information_schema's) that a
  // view, rule, row security policy or atomic body references, as
  // "schema.name", so that e.g. a view over pg_catalog.pg_stats is known.
  std::map<uint32_t, std::string> system_relations;
  // The names of every relation in pg_catalog and information_schema: a name
  // the statement uses that is only one of these needs no look-up.
  std::set<std::string, std::less<>> system_relation_names;
  double read_ms = 0;  // how long read_catalog_facts took
  // The catalog generation these facts hold every DDL of (catalog_watch.h);
  // 0 when the database has no generation sequence (no event trigger):
  // then restricted statements carry no guard.
  int64_t generation = 0;
  // The catalog guard in C is installed (maskfn/install.sql): schema
  // kanon_mask and every function in it belong to superusers, no other role
  // may create in it, and kanon_mask.catalog_is(int8), catalog_stays(int8),
  // copy_current(regclass, text) and snapshot_sees(xid8, text) are the C
  // functions install.sql creates, executable by PUBLIC. The rewriter then
  // writes them instead of the PL/pgSQL guards in schema kanon
  // (rewriter/catalog_guard.h) and of the SQL guard of a masked copy
  // (rewriter/rewrite_plan.cc), and a refresh instead of a masked view's
  // SQL guard (store/materializer.cc).
  bool c_guard = false;
  // The built-in functions' count and newest change; while it stays the
  // same, read_catalog_facts reuses the previous facts' built-in functions.
  std::string builtin_fingerprint;

  const RelationFacts* relation(uint32_t oid) const;
  const FunctionFacts* function(uint32_t oid) const;
  // Every relation / function with this name, in any schema (names as
  // stored: case kept, unquoted).
  std::vector<const RelationFacts*> relations_named(std::string_view name) const;
  std::vector<const FunctionFacts*> functions_named(std::string_view name) const;

  // Call once after filling relations and functions (read_catalog_facts does).
  void index();

 private:
  std::map<uint32_t, size_t> relation_by_oid_;
  std::map<uint32_t, size_t> function_by_oid_;
  std::multimap<std::string, size_t, std::less<>> relation_by_name_;
  std::multimap<std::string, size_t, std::less<>> function_by_name_;
};

// Reads the facts of the database `conn` is connected to, in one
// repeatable-read transaction: six statements, prepared on the connection
// (named kanon_catalog_*) so that later reads on the same connection are not
// planned again. With `previous` (facts read before from the same database)
// the built-in functions are taken from it unless they changed. pqxx errors
// pass through.
CatalogFacts read_catalog_facts(pqxx::connection_base& conn,
                                const CatalogFacts* previous = nullptr);

// CatalogFacts::c_guard alone, read in `tx`: whether the guards in C are
// installed as maskfn/install.sql makes them (store/materializer.cc writes
// a masked view's guard with it).
bool c_guards_installed(pqxx::transaction_base& tx);

// Whether some relation of a persistent (not temporary) schema has one of
// these names (as stored: case kept); one cheap catalog query, so a name the
// facts do not know can be told apart from a session's temporary object or a
// missing one. Looks at the schemas read_catalog_facts reads: pg_catalog,
// information_schema and pg_toast are left out like the temporary schemas.
bool any_persistent_relation_named(pqxx::connection_base& conn,
                                   const std::vector<std::string>& names);
// The same for relations and functions (functions in any schema but the
// temporary ones, pg_catalog's included: the facts hold all of them).
bool any_persistent_object_named(pqxx::connection_base& conn,
                                 const std::vector<std::string>& names);
// A temporary object of one of these names (in any session's temporary
// schema) that can run code or read other objects: a function, a table with
// a trigger, rule, row security, a column type outside pg_catalog, or a
// default or check calling a function outside pg_catalog, a view that
// reads anything but such plain temporary tables of its schema and
// pg_catalog's functions, operators, types and collations.
// kanon's catalog leaves temporary schemas out, so it decides a statement
// over such an object by its name alone; what the object reads may change
// after it was made (an administrator replaces a view under it, creates the
// view its function names). "pg_temp_3.tv (a view)", or nullopt.
std::optional<std::string> unsafe_temporary_object(pqxx::connection_base& conn,
                                                   const std::vector<std::string>& names);
// The event triggers that fire in ordinary sessions now, as read_catalog_facts
// reads them (CatalogFacts::event_triggers). Creating, altering or dropping
// an event trigger fires none, so the catalog watch never hears of it: a
// restricted statement that runs DDL compares this with its facts first
// (rewriter::RewriteResult::event_triggers).
std::vector<EventTriggerFacts> read_event_triggers(pqxx::connection_base& conn);

}  // namespace kanon::catalog
