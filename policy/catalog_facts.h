// CatalogFacts: what one database's catalog says about every object a
// restricted statement can name or reach, read in one pass over kanon's
// service connection (read_catalog_facts). Raw facts only, no judgement:
// rewriter/object_catalog.h decides what reaches a protected table.
//
// Plain value, immutable once read; shared between threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "policy/table_catalog.h"

namespace pqxx {
class connection_base;
}

namespace kanon::policy {

struct RelationFacts {
  uint32_t oid = 0;
  std::string schema;
  std::string name;
  // pg_class.relkind: 'r' table, 'p' partitioned table, 'v' view,
  // 'm' materialized view, 'f' foreign table, 'S' sequence, 'c' composite type.
  char kind = 'r';
  std::vector<ColumnInfo> columns;  // attnum order, dropped columns left out
  std::vector<uint32_t> parents;    // pg_inherits: direct parents (tables and partitions)
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
  // What runs when the relation is written: functions of its triggers
  // (pg_trigger, internal constraint triggers left out) and the relations and
  // functions its non-SELECT rules (pg_rewrite ev_type 2..4) reference.
  std::vector<uint32_t> write_relations;
  std::vector<uint32_t> write_functions;
  uint32_t foreign_server = 0;  // foreign tables: pg_foreign_table.ftserver
};

struct FunctionFacts {
  uint32_t oid = 0;
  std::string schema;
  std::string name;
  std::string language;  // pg_language.lanname: "sql", "plpgsql", "internal", "c", ...
  char kind = 'f';       // pg_proc.prokind: 'f' function, 'p' procedure, 'a' aggregate, 'w' window
  bool builtin = false;  // oid < 16384 (FirstNormalObjectId): shipped with the server
  std::string extension;  // the extension it belongs to (pg_depend deptype 'e'), if any
  bool security_definer = false;
  // SQL functions with a string body: prosrc. Empty for BEGIN ATOMIC /
  // RETURN bodies (atomic), whose reads come from pg_depend instead.
  std::string body;
  bool atomic = false;
  std::vector<uint32_t> reads_relations;  // atomic bodies: pg_depend
  std::vector<uint32_t> reads_functions;  // atomic bodies: pg_depend
  // Aggregates: their support functions (transition, final, combine, ...).
  std::vector<uint32_t> support_functions;
};

struct CatalogFacts {
  std::string database;
  // Every relation outside pg_catalog, information_schema, pg_toast and
  // temporary schemas, and every function (pg_catalog's included: BI tools
  // call them, and a built-in function is safe only when kanon knows it).
  std::vector<RelationFacts> relations;
  std::vector<FunctionFacts> functions;
  double read_ms = 0;  // how long read_catalog_facts took

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

// Reads the facts of the database `conn` is connected to. pqxx errors pass
// through.
CatalogFacts read_catalog_facts(pqxx::connection_base& conn);

// Whether some relation of a persistent (not temporary) schema has one of
// these names; one cheap catalog query, so a name the facts do not know can be
// told apart from a session's temporary object or a missing one.
bool any_persistent_relation_named(pqxx::connection_base& conn,
                                   const std::vector<std::string>& names);

}  // namespace kanon::policy
