// ObjectCatalog: for every relation and function of one database, which
// protected tables reading (or writing) it can reach, transitively — views
// and their rules, materialized views, inheritance children and partitions,
// SQL function bodies (string bodies parsed with parse_sql, BEGIN ATOMIC
// bodies through pg_depend), triggers and non-SELECT rules. Code kanon cannot
// read (functions in other languages, foreign tables) is opaque: it may reach
// anything. Built from catalog::CatalogFacts; pure, no database access.
//
// Immutable once built; shared between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "catalog/catalog_facts.h"

namespace kanon::rewriter {

struct Reach {
  std::vector<std::string> tables;  // protected tables ("schema.table" of the policy), sorted
  bool opaque = false;              // code or data kanon cannot analyse is on the way
  // The object that made it reach, "schema.name", for messages: the first
  // dependency (in catalog order) that reaches something — e.g. for a view
  // over public.v_people, "public.v_people"; for a protected table or a child,
  // the protected table; for opaque code (a plpgsql function, a foreign table,
  // a denied built-in such as query_to_xml) the object itself.
  std::string via;
  // A user-defined function whose body PostgreSQL reads from the catalog
  // only when it calls it (any language but c and internal: SQL bodies at
  // their first call, plpgsql and other procedural languages at every call)
  // is on the way, reaching something or not. Such a statement holds the
  // catalog still while it runs (rewriter/catalog_guard.h).
  bool late_code = false;
  // One of kanon's own tables or the audit trail's is on the way (opaque is
  // then set too): rules::kKanonInternal, whatever allowed_functions says.
  bool internal = false;
  // Relation names a SQL function with a string body on the way names
  // without a schema (sorted, unique). PostgreSQL resolves them when the
  // function runs, the session's temporary schema first, which kanon's
  // catalog does not hold: a temporary view of that name would be read
  // instead (catalog::unsafe_temporary_object decides whether one is there).
  std::vector<std::string> shadowable;
  bool any() const { return opaque || !tables.empty(); }
};

enum class RelationClass {
  kPlain,      // reaches no protected table: read and written as it is
  kProtected,  // a protected table itself (the rewriter masks it)
  kChild,      // an inheritance child or partition of a protected table: parent's masks
  kView,       // a view that reaches a protected table: expanded in place, masked inside
  // A materialized view that reaches a protected table or opaque code, or a
  // table whose reading reaches a protected table through its own children
  // (a protected table attached below it) or its row security policies: denied.
  kDerived,
  // A foreign table, a view whose reach is opaque, or a table that reaches
  // only opaque code (a foreign partition, a policy calling plpgsql): denied.
  kOpaque,
};

struct CatalogRelation {
  const catalog::RelationFacts* facts = nullptr;
  RelationClass cls = RelationClass::kPlain;
  // What reading it reaches. Protected: itself. Child: every protected
  // ancestor. Views and materialized views: what their query reads. Every
  // other relation: its inheritance children and partitions (reading a parent
  // reads them) and its row security policies. Foreign tables: opaque.
  Reach read;
  // What writing it runs: `read`, triggers, non-SELECT rules, defaults,
  // constraints, index expressions, foreign keys, and the write reach of the
  // relations those write and of its children.
  Reach write;
  std::string protected_parent;  // kChild: the nearest protected ancestor's policy name
  // One of kanon's own tables (schema kanon, but its sequences and
  // schema_version) or an internal table the catalog was given (the audit
  // trail's): no restricted statement names it (rules::kKanonInternal), and
  // its reach is opaque, so nothing that reads or writes it is allowed
  // either.
  bool internal = false;
};

struct CatalogFunction {
  const catalog::FunctionFacts* facts = nullptr;
  Reach reach;  // what calling it can read
};

// Function reach, in order:
//   - a name statement_rules' denied_function() lists (query_to_xml, dblink*,
//     ...), in any schema: opaque (the rewriter denies them when named in a
//     statement; here they are found behind views and functions);
//   - built-in (oid < 16384) or in pg_catalog: nothing;
//   - aggregates: the union of their support functions;
//   - language sql: a BEGIN ATOMIC / RETURN body reaches what pg_depend says
//     it reads (and, when volatile, what writing those relations runs); a
//     string body is parsed with parse_sql and every relation and function it
//     names is resolved conservatively (an unqualified name is every object of
//     that name in any schema), statements that write add the write reach of
//     their relations, and user-defined operators whose symbol it contains
//     (or that IN, BETWEEN, ORDER BY, ... apply: =, <>, <, >, <=, >=, ~~ and
//     friends) and every user-defined cast are added; a body that does not
//     parse, DO, EXECUTE or other denied statements: opaque;
//   - extension functions in language c or internal: nothing, except
//     connection functions (dblink*, postgres_fdw_*): opaque;
//   - every other language (plpgsql, plpython, c outside an extension, ...):
//     opaque.
// Relations a view, policy or body reads that are statistics views
// (statement_rules' is_statistics_relation) make it opaque. Cycles (views or
// functions that reach each other) are handled as strongly connected
// components: every member reaches the union.
// Operators PostgreSQL may apply without their symbol in the text (IN,
// BETWEEN, ORDER BY, GROUP BY, DISTINCT, joins, LIKE).
bool implied_operator(std::string_view name);

class ObjectCatalog {
 public:
  // `protected_tables`: "schema.table" of every protected table (policy names).
  // `internal_tables`: "schema.table" of tables kanon writes for itself
  // outside schema kanon (the audit trail's), internal like kanon's own.
  ObjectCatalog(std::shared_ptr<const catalog::CatalogFacts> facts,
                const std::vector<std::string>& protected_tables,
                const std::vector<std::string>& internal_tables = {});

  // `schema` empty: every relation with this name, in any schema.
  std::vector<const CatalogRelation*> relations(std::string_view schema,
                                                std::string_view name) const;
  // `schema` empty: every function with this name (all overloads, any schema).
  std::vector<const CatalogFunction*> functions(std::string_view schema,
                                                std::string_view name) const;
  const CatalogRelation* relation(uint32_t oid) const;
  const CatalogFunction* function(uint32_t oid) const;

  // What the functions of user-defined operators, casts and types (domain
  // CHECK and DEFAULT, range subtype_diff) reach (CatalogFacts::operators,
  // cast_functions, type_functions): PostgreSQL may run them for any
  // statement, without a function name in the text.
  const Reach& implicit_reach() const { return implicit_; }

  const catalog::CatalogFacts& facts() const { return *facts_; }

  // The indexes of a relation ("schema.table") and, for a protected table,
  // of every descendant: what a scan of it may go through.
  const std::vector<const catalog::RelationFacts::Index*>& tree_indexes(
      const std::string& table) const;

 private:
  std::shared_ptr<const catalog::CatalogFacts> facts_;
  std::vector<CatalogRelation> relations_;  // parallel to facts_->relations
  std::vector<CatalogFunction> functions_;  // parallel to facts_->functions
  Reach implicit_;
  std::unordered_map<std::string, std::vector<const catalog::RelationFacts::Index*>> tree_indexes_;
};

}  // namespace kanon::rewriter
