// ObjectCatalog: for every relation and function of one database, which
// protected tables reading (or writing) it can reach, transitively — views
// and their rules, materialized views, inheritance children and partitions,
// SQL function bodies (string bodies parsed with parse_sql, BEGIN ATOMIC
// bodies through pg_depend), triggers and non-SELECT rules. Code kanon cannot
// read (functions in other languages, foreign tables) is opaque: it may reach
// anything. Built from policy::CatalogFacts; pure, no database access.
//
// Immutable once built; shared between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policy/catalog_facts.h"

namespace kanon::rewriter {

struct Reach {
  std::vector<std::string> tables;  // protected tables ("schema.table" of the policy), sorted
  bool opaque = false;              // code or data kanon cannot analyse is on the way
  std::string via;  // the object that made it reach (first found), for messages
  bool any() const { return opaque || !tables.empty(); }
};

enum class RelationClass {
  kPlain,      // reaches no protected table: read and written as it is
  kProtected,  // a protected table itself (the rewriter masks it)
  kChild,      // an inheritance child or partition of a protected table: parent's masks
  kView,       // a view that reaches a protected table: expanded in place, masked inside
  kDerived,    // a materialized view (or table) derived from protected rows: denied
  kOpaque,     // a foreign table, or a view over opaque code: denied
};

struct CatalogRelation {
  const policy::RelationFacts* facts = nullptr;
  RelationClass cls = RelationClass::kPlain;
  Reach read;   // what reading it reaches
  Reach write;  // what writing it runs: triggers, rules (and `read` of the relation itself)
  std::string protected_parent;  // kChild: the protected ancestor's policy name
};

struct CatalogFunction {
  const policy::FunctionFacts* facts = nullptr;
  Reach reach;  // what calling it can read
};

class ObjectCatalog {
 public:
  // `protected_tables`: "schema.table" of every protected table (policy names).
  ObjectCatalog(std::shared_ptr<const policy::CatalogFacts> facts,
                const std::vector<std::string>& protected_tables);

  // `schema` empty: every relation with this name, in any schema.
  std::vector<const CatalogRelation*> relations(std::string_view schema,
                                                std::string_view name) const;
  // `schema` empty: every function with this name (all overloads, any schema).
  std::vector<const CatalogFunction*> functions(std::string_view schema,
                                                std::string_view name) const;
  const CatalogRelation* relation(uint32_t oid) const;

  const policy::CatalogFacts& facts() const { return *facts_; }

 private:
  std::shared_ptr<const policy::CatalogFacts> facts_;
  std::vector<CatalogRelation> relations_;  // parallel to facts_->relations
  std::vector<CatalogFunction> functions_;  // parallel to facts_->functions
};

}  // namespace kanon::rewriter
