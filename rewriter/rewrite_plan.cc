#include "rewriter/rewrite_plan.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/text.h"
#include "catalog/mask_function.h"
#include "policy/sql_text.h"
#include "rewriter/restriction_filter.h"
#include "rewriter/sql_lexer.h"
#include "rewriter/string_literals.h"

namespace kanon::rewriter {
namespace {

bool is_write_kind(StatementKind kind) {
  return kind == StatementKind::kInsert || kind == StatementKind::kUpdate ||
         kind == StatementKind::kDelete || kind == StatementKind::kMerge ||
         kind == StatementKind::kTruncate || kind == StatementKind::kCopy;
}

// VACUUM, ANALYZE, CLUSTER and REINDEX evaluate the index expressions and
// extended statistics of the tables they work on, which kanon decides from
// the tables the statement names (their write reach). Without a list they
// work on every table the login owns, and REINDEX INDEX, SCHEMA, SYSTEM or
// DATABASE names no table: what they do is not what kanon decided, so they
// are denied (rules::kMaintenanceScope). Returns what is denied, or null.
const char* unscoped_maintenance(const Statement& st) {
  switch (st.kind) {
    case StatementKind::kVacuum:
      return st.relations.empty() ? "VACUUM or ANALYZE without a table list" : nullptr;
    case StatementKind::kCluster:
      return st.relations.empty() ? "CLUSTER without a table" : nullptr;
    case StatementKind::kReindex:
      return st.subkind == "REINDEX_OBJECT_TABLE" && !st.relations.empty()
                 ? nullptr
                 : "REINDEX of an index, a schema, the system or the database";
    default:
      return nullptr;
  }
}

struct ProtectedRef {
  const RelationRef* ref;
  const ProtectedTable* table;
  // The referenced relation's own catalog entry when it is a child (its
  // columns may extend the parent's); null otherwise or without a catalog.
  const catalog::RelationFacts* child = nullptr;
};

struct CatalogRef {
  const RelationRef* ref;
  const CatalogRelation* relation;
};

// Views inside views inside views...: deeper than this is denied.
constexpr int kMaxViewDepth = 16;

class Planner {
 public:
  Planner(std::string_view sql, const PlanInputs& inputs, int depth = 0)
      : sql_(sql),
        index_(inputs.index),
        inputs_(inputs),
        context_(inputs.context),
        search_path_(parse_search_path(inputs.context.search_path)),
        depth_(depth) {}

  // Adds the statement's edits to plan_; false (with plan_.denied set) when
  // the statement is denied.
  bool plan(const Statement& st) {
    if (!check_event_triggers(st)) return false;
    if (unprivileged() && (st.kind == StatementKind::kDo || st.kind == StatementKind::kCall ||
                           st.kind == StatementKind::kCreateFunction))
      return plan_unprivileged_code(st);
    if (st.kind == StatementKind::kCreateFunction && st.function_language == "sql")
      return plan_sql_function(st);
    const RulesVerdict verdict = check_rules(st, RulesScope::kStatement);
    if (verdict.denied) return deny(*verdict.denied, verdict.object);
    const StatementClass cls = verdict.cls;
    if (!check_functions(st)) return false;
    if (!check_implicit_code(st)) return false;

    std::vector<ProtectedRef> refs;
    std::vector<CatalogRef> reaching;  // not protected, but the catalog says they reach one
    std::vector<const RelationRef*> statistics;  // pg_stats and friends: filtered
    for (const auto& r : st.relations) {
      if (r.cte) continue;
      note_late_code(r);
      if (names_statistics_relation(r)) {
        if (!is_filtered_statistics_view(r.name)) return deny(rules::kStatisticsView, r.name);
        statistics.push_back(&r);
        continue;
      }
      const ProtectedTable* t = nullptr;
      const auto match = find(r.schema, r.name, &t);
      if (match == ProtectedIndex::Match::kAmbiguous) return deny(rules::kAmbiguousName, r.name);
      if (match == ProtectedIndex::Match::kFound) {
        refs.push_back({&r, t, t->child ? child_facts(t->schema, t->table) : nullptr});
        continue;
      }
      const CatalogRelation* rel = nullptr;
      if (!classify(r, &rel)) return false;
      if (!rel) continue;
      if (rel->cls == RelationClass::kChild) {
        // A child the snapshot's build did not see: the parent's masks.
        const ProtectedTable* parent = nullptr;
        const auto [ps, pn] = split_name(rel->protected_parent);
        if (find(ps, pn, &parent) == ProtectedIndex::Match::kFound)
          refs.push_back({&r, parent, rel->facts});
        else if (index_.find(ps, pn, search_path_, &parent) == ProtectedIndex::Match::kNone)
          return deny(rules::kPolicyNotBuilt, rel->protected_parent);
        continue;  // else the session is exempt for the parent
      }
      // kanon's own tables and the audit trail's, in any statement and any
      // role (read, write, LOCK); what reaches them is opaque.
      if (rel->internal) return deny(rules::kKanonInternal, qualified(*rel->facts));
      reaching.push_back({&r, rel});
    }

    // EXPLAIN can wrap CREATE TABLE AS / MATERIALIZED VIEW: a write too.
    const bool wraps_write = cls == StatementClass::kWrapper && !st.inner_node.empty() &&
                             classify_statement(st.inner_kind) == StatementClass::kWrite;
    const bool write = cls == StatementClass::kWrite || wraps_write || st.select_into ||
                       !st.nested_writes.empty() || (cls == StatementClass::kCopy && st.copy_from);
    // Statistics views: only the rows of the session's own temporary tables,
    // in a query (a view or a write over them would keep them unfiltered).
    for (const RelationRef* r : statistics) {
      if (write || r->role != RelationRef::Role::kRead || !splice_from_item(*r, [&] {
            return statistics_filter(r->name) +
                   (r->has_alias ? "" : " AS " + policy::quote_identifier(r->name));
          }))
        return deny(rules::kStatisticsView, r->name);
    }
    if (write) {
      if (const char* what = unscoped_maintenance(st)) return deny(rules::kMaintenanceScope, what);
      const Rule& rule = is_write_kind(st.kind) || !st.nested_writes.empty()
                             ? rules::kWriteProtected
                             : rules::kDdlProtected;
      if (!refs.empty()) return deny(rule, refs.front().table->policy_name);
      for (const auto& c : reaching) {
        // COPY FROM's table is written: its triggers, defaults, constraints
        // and foreign keys run as for an INSERT.
        const bool written = c.ref->role == RelationRef::Role::kOther ||
                             (c.ref->role == RelationRef::Role::kCopySource && st.copy_from);
        if (reaches(*c.relation, written)) return deny(rule, describe(*c.relation, written));
      }
      if (cls == StatementClass::kWrite || wraps_write)
        for (const auto& n : st.names) {
          if (!index_.has_name(n)) continue;
          const ProtectedTable* t = nullptr;
          if (find("", n, &t) == ProtectedIndex::Match::kNone) continue;
          return deny(rule, t ? t->policy_name : n);
        }
      if ((cls == StatementClass::kWrite || wraps_write) && !check_named_objects(st, rule))
        return false;
      return true;
    }
    for (const auto& c : reaching)
      if (!plan_reaching(st, cls, c)) return false;
    if (refs.empty()) return true;

    for (const auto& p : refs)
      if (!p.table->snapshot || p.table->snapshot->masks.columns.empty())
        return deny(rules::kPolicyNotBuilt, p.table->policy_name);
    for (const auto& c : st.columns)
      if (!c.star && !c.fields.empty() && is_system_column(c.fields.back()))
        return deny(rules::kSystemColumn, refs.front().table->policy_name + "." + c.fields.back());

    const ColumnNaming naming = column_naming(st);
    for (const auto& p : refs) {
      bool ok = true;
      const bool masks = evaluates_masks(*p.ref, *p.table, p.child);
      if (masks) {
        const policy::TableSnapshot& snap = *p.table->snapshot;
        if (snap.masks.interpreted) plan_.inline_masks = true;
        if (snap.masks.calls_function) plan_.function_masks = true;
        if (snap.masks.calls_function && !mask_function_current(snap.mask_function))
          return deny(rules::kMaskFunction, p.table->policy_name);
        if (const std::string index = quasi_identifier_index(*p.ref, *p.table, p.child);
            !index.empty())
          return deny(rules::kQuasiIdentifierIndex, index);
      }
      // Every read that evaluates a mask over raw columns is fenced
      // (masked_item): PostgreSQL would estimate a masked column from the
      // raw statistics of every column its mask names, and the plan it
      // picks shows the estimate. A read listing only columns released as
      // they are (a key) and constants holds nothing to estimate but those
      // columns, and keeps join clauses reaching the table's indexes.
      const auto listed = listed_columns(naming, *p.ref, *p.table->snapshot);
      const bool fence = masks && (p.child || lists_masked_column(listed));
      const auto make_item = [&] { return masked_item(*p.ref, *p.table, p.child, listed, fence); };
      switch (p.ref->role) {
        case RelationRef::Role::kRead:
          ok = splice_from_item(*p.ref, make_item);
          break;
        case RelationRef::Role::kCopySource:
          ok = cls == StatementClass::kCopy && splice_copy(st, *p.ref, make_item);
          break;
        case RelationRef::Role::kLockTarget:
          break;
        case RelationRef::Role::kSampled:
          return deny(rules::kTablesample, p.table->policy_name);
        case RelationRef::Role::kOther:
          ok = false;
          break;
      }
      if (!ok) return deny(rules::kUnsupportedReference, p.table->policy_name);
    }
    for (const auto& c : st.columns)
      if (!shorten_column(c)) return deny(rules::kUnsupportedReference, base::join(c.fields, "."));
    for (const auto& p : refs) plan_.tables.push_back(p.table->policy_name);
    return true;
  }

  // A statement of the session's text: plan() and, for an EXPLAIN that
  // reads protected rows, the estimates hidden.
  bool plan_top(const Statement& st) {
    const size_t tables = plan_.tables.size();
    note_statement_names(st);
    if (fires_event_triggers(st)) plan_.defines = true;
    dropping_ = st.kind == StatementKind::kDrop;
    const bool planned = plan(st);
    dropping_ = false;
    if (!planned) return false;
    if (st.kind != StatementKind::kExplain) return true;
    const bool reads_protected = plan_.tables.size() != tables;
    if (!reads_protected && st.executed.empty()) return true;
    return hide_estimates(st, reads_protected);
  }

  // DO, CALL and CREATE FUNCTION / PROCEDURE (any language: the server
  // refuses untrusted ones to a login that is not a superuser) when
  // PostgreSQL itself keeps the login from reading protected data
  // (PlanContext::reads_nothing_protected). Arguments of CALL and defaults
  // are still checked like any expression.
  bool plan_unprivileged_code(const Statement& st) {
    if (const RulesVerdict v = check_rules(st, RulesScope::kUnprivilegedCode); v.denied)
      return deny(*v.denied, v.object);
    if (!check_functions(st) || !check_implicit_code(st)) return false;
    for (const auto& r : st.relations) {
      if (r.cte) continue;
      if (names_statistics_relation(r)) return deny(rules::kStatisticsView, r.name);
      const ProtectedTable* t = nullptr;
      if (find(r.schema, r.name, &t) != ProtectedIndex::Match::kNone)
        return deny(rules::kFunctionBodyProtected, t ? t->policy_name : r.name);
      const CatalogRelation* rel = nullptr;
      if (!classify(r, &rel)) return false;
      if (rel) return deny(rules::kFunctionBodyProtected, describe(*rel, !reaches(*rel, false)));
    }
    return true;
  }

  // CREATE FUNCTION / PROCEDURE ... LANGUAGE sql: allowed when its body (a
  // BEGIN ATOMIC / RETURN body is this statement's own relations and
  // functions; a string body is parsed) and its defaults reach no protected
  // table and run nothing a restricted statement may not. A call of the
  // function is decided again from the catalog (object_catalog.h), and so is
  // every way PostgreSQL runs it without a call in the text (triggers,
  // defaults, constraints, index expressions, operators, casts).
  bool plan_sql_function(const Statement& st) {
    const Statement* outer = current_;
    current_ = &st;
    const bool ok = plan_sql_function_in(st);
    current_ = outer;
    return ok;
  }

  bool plan_sql_function_in(const Statement& st) {
    if (!check_code(st)) return false;
    if (st.function_sql_body || st.function_body.empty()) return true;
    const std::string what = "the body of a LANGUAGE sql function";
    if (depth_ >= kMaxViewDepth) return deny(rules::kOpaqueCode, what);
    const ParseOutcome body = parse_sql(st.function_body);
    if (!body.ok) return deny(rules::kOpaqueCode, what + " (kanon cannot parse it)");
    // The server parses the body again at each call, under the caller's
    // standard_conforming_strings: a plain constant holding a backslash
    // would end elsewhere with it off.
    if (!literals_read_alike(st.function_body))
      return deny(rules::kOpaqueCode,
                  what +
                      " (a plain string constant holds a backslash, which the server reads "
                      "differently with standard_conforming_strings off; write E'...')");
    Planner inner(st.function_body, inputs_, depth_ + 1);
    for (const auto& b : body.statements)
      if (!inner.check_code(b)) break;
    RewritePlan planned = inner.take();
    if (planned.denied) return deny(*planned.denied, planned.object + " in " + what);
    plan_.unknown.insert(plan_.unknown.end(), planned.unknown.begin(), planned.unknown.end());
    plan_.unknown_used.insert(plan_.unknown_used.end(), planned.unknown_used.begin(),
                              planned.unknown_used.end());
    return true;
  }

  // A statement of a function body (or the CREATE FUNCTION statement with
  // its BEGIN ATOMIC body): it may run whenever the function does, so nothing
  // in it may name or reach a protected table (by bare name in any schema),
  // read statistics, or run code kanon cannot inspect.
  bool check_code(const Statement& st) {
    if (st.kind == StatementKind::kCreateFunction && st.function_language == "sql" &&
        &st != current_)
      return plan_sql_function(st);
    if (const RulesVerdict v = check_rules(st, RulesScope::kFunctionBody); v.denied)
      return deny(*v.denied, v.object);
    if (!check_functions(st)) return false;
    if (!check_implicit_code(st)) return false;
    for (const auto& r : st.relations) {
      if (r.cte) continue;
      if (names_statistics_relation(r)) return deny(rules::kStatisticsView, r.name);
      const ProtectedTable* t = nullptr;
      const auto match = find(r.schema, r.name, &t);
      if (match != ProtectedIndex::Match::kNone)
        return deny(rules::kFunctionBodyProtected, t ? t->policy_name : r.name);
      const CatalogRelation* rel = nullptr;
      if (!classify(r, &rel)) return false;
      if (rel) return deny(rules::kFunctionBodyProtected, describe(*rel, !reaches(*rel, false)));
    }
    for (const auto& n : st.names) {
      if (!index_.has_name(n)) continue;
      const ProtectedTable* t = nullptr;
      if (find("", n, &t) == ProtectedIndex::Match::kNone) continue;
      return deny(rules::kFunctionBodyProtected, t ? t->policy_name : n);
    }
    return true;
  }

  RewritePlan take() {
    plan_.copies_constants = plan_.copies_constants || copies_constants_;
    if (!plan_.denied) {
      std::sort(plan_.edits.begin(), plan_.edits.end(),
                [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
      for (size_t i = 1; i < plan_.edits.size(); ++i)
        if (plan_.edits[i].begin < plan_.edits[i - 1].end) {
          deny(rules::kUnsupportedReference, "overlapping references");
          break;
        }
    }
    if (plan_.denied) {
      plan_.edits.clear();
      plan_.unknown.clear();
      plan_.unknown_used.clear();
      plan_.tables.clear();
    }
    std::sort(plan_.tables.begin(), plan_.tables.end());
    plan_.tables.erase(std::unique(plan_.tables.begin(), plan_.tables.end()), plan_.tables.end());
    std::sort(plan_.unknown.begin(), plan_.unknown.end());
    plan_.unknown.erase(std::unique(plan_.unknown.begin(), plan_.unknown.end()),
                        plan_.unknown.end());
    std::sort(plan_.unknown_used.begin(), plan_.unknown_used.end());
    plan_.unknown_used.erase(std::unique(plan_.unknown_used.begin(), plan_.unknown_used.end()),
                             plan_.unknown_used.end());
    return std::move(plan_);
  }

 private:
  // The index's answer, with the tables this session is exempt from left out.
  ProtectedIndex::Match find(std::string_view schema, std::string_view name,
                             const ProtectedTable** out) const {
    const auto match = index_.find(schema, name, search_path_, out);
    if (match == ProtectedIndex::Match::kFound &&
        std::binary_search(context_.exempt_tables.begin(), context_.exempt_tables.end(),
                           (*out)->policy_name)) {
      *out = nullptr;
      return ProtectedIndex::Match::kNone;
    }
    return match;
  }

  // The planner estimates a masked column from the raw column's statistics
  // (a GROUP BY of it is estimated at the raw number of distinct values),
  // so EXPLAIN of a statement that reads protected rows, or that runs a
  // prepared one, shows no estimates: COSTS false is added last (PostgreSQL
  // takes an option's last value) or, after the legacy EXPLAIN [ANALYZE]
  // [VERBOSE] or before a query in parentheses, written as an option list.
  bool hide_estimates(const Statement& st, bool reads_protected) {
    // The executor's figures follow the estimates too: a hash aggregate's
    // memory, a hash's original bucket count (an adversarial probe read the
    // raw number of distinct states and cities off `Memory Usage`). Of a
    // prepared statement only the proxy knows what it reads
    // (proxy/session_prepared.cc).
    if (st.explain_analyze && reads_protected)
      return deny(rules::kExplainAnalyze, "EXPLAIN ANALYZE");
    const std::string_view text = sql_;
    NameToken word;
    size_t pos = skip_space(text, static_cast<size_t>(st.location));
    if (!read_identifier(text, pos, word) || word.value != "explain")
      return deny(rules::kUnsupportedReference, "EXPLAIN");
    pos = skip_space(text, word.end);
    if (st.explain_options && pos < text.size() && text[pos] == '(') {
      const size_t close = matching_paren(text, pos);
      if (close == std::string_view::npos) return deny(rules::kUnsupportedReference, "EXPLAIN");
      plan_.edits.push_back({close - 1, close - 1, ", COSTS false"});
      return true;
    }
    std::string options;
    size_t end = word.end;
    NameToken option;
    while (pos < text.size() && text[pos] != '"' && read_identifier(text, pos, option)) {
      if (option.value == "analyze" || option.value == "analyse")
        options += "ANALYZE true, ";
      else if (option.value == "verbose")
        options += "VERBOSE true, ";
      else
        break;
      end = option.end;
      pos = skip_space(text, option.end);
    }
    plan_.edits.push_back({word.end, end, " (" + options + "COSTS false)"});
    return true;
  }

  // ---- Catalog: what the objects a statement names can reach ----

  static std::pair<std::string, std::string> split_name(const std::string& qualified) {
    const size_t dot = qualified.find('.');
    if (dot == std::string::npos) return {std::string(), qualified};
    return {qualified.substr(0, dot), qualified.substr(dot + 1)};
  }

  static std::string qualified(const catalog::RelationFacts& f) { return f.schema + "." + f.name; }

  bool absent(std::string_view name) const {
    return std::binary_search(context_.absent_names.begin(), context_.absent_names.end(), name);
  }

  // What a reach means for this session: tables it is exempt for left out.
  Reach effective(const Reach& reach) const {
    Reach out;
    out.opaque = reach.opaque;
    out.internal = reach.internal;
    out.via = reach.via;
    for (const auto& t : reach.tables)
      if (!std::binary_search(context_.exempt_tables.begin(), context_.exempt_tables.end(), t))
        out.tables.push_back(t);
    return out;
  }

  bool reaches(const CatalogRelation& rel, bool write) const {
    return effective(write ? rel.write : rel.read).any();
  }

  // "public.v (reaches public.people)", for messages.
  std::string describe(const CatalogRelation& rel, bool write) const {
    const Reach e = effective(write ? rel.write : rel.read);
    std::string s = qualified(*rel.facts);
    if (!e.tables.empty())
      s += " (reaches " + e.tables.front() + ")";
    else if (e.internal)
      s += " (reaches " + e.via + ")";
    else if (e.opaque)
      s += " (reaches code kanon cannot analyse" + (e.via.empty() ? "" : ": " + e.via) + ")";
    return s;
  }

  const catalog::RelationFacts* child_facts(const std::string& schema,
                                            const std::string& table) const {
    if (!inputs_.catalog) return nullptr;
    for (const auto* c : inputs_.catalog->relations(schema, table)) return c->facts;
    return nullptr;
  }

  // The child's columns in its own order: the parent's masks for the columns
  // it inherits, its own columns (not quasi-identifiers of the parent) as
  // they are.
  static std::string child_select_list(const policy::TableMasks& masks,
                                       const catalog::RelationFacts& child) {
    std::string s;
    for (const auto& col : child.columns) {
      if (!s.empty()) s += ", ";
      const auto it =
          std::find_if(masks.columns.begin(), masks.columns.end(),
                       [&](const policy::ColumnMask& m) { return m.column == col.name; });
      s += it == masks.columns.end() ? policy::quote_identifier(col.name) : it->select_item();
    }
    return s;
  }

  // Whether reading (or, for a write target, writing) a relation of this
  // name runs a function whose body PostgreSQL reads when it calls it: an
  // unqualified name counts every relation of that name.
  void note_late_code(const RelationRef& r) {
    if (!inputs_.catalog) return;
    const bool written =
        r.role == RelationRef::Role::kOther || r.role == RelationRef::Role::kCopySource;
    for (const auto* c : inputs_.catalog->relations(r.schema, r.name)) {
      if (c->read.late_code || (written && c->write.late_code)) plan_.late_code = true;
      note_shadowable(c->read);
      if (written) note_shadowable(c->write);
    }
  }

  // A name the catalog does not know: looked up by the caller. DROP only
  // removes what it names (`unknown_used` leaves it out).
  void note_unknown(const std::string& name) {
    plan_.unknown.push_back(name);
    if (!dropping_) plan_.unknown_used.push_back(name);
  }

  void note_shadowable(const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::vector<std::string> out;
    std::set_union(plan_.shadowable.begin(), plan_.shadowable.end(), names.begin(), names.end(),
                   std::back_inserter(out));
    plan_.shadowable = std::move(out);
  }
  void note_shadowable(const Reach& r) { note_shadowable(r.shadowable); }

  // The relations a statement names without a schema: PostgreSQL looks
  // them up in the session's temporary schema first (before pg_catalog
  // too), which kanon's catalog does not hold, and a prepared statement
  // looks them up again whenever PostgreSQL analyses it again. DROP is left
  // out: dropping a temporary object that shadows a name reads nothing.
  void note_statement_names(const Statement& st) {
    if (st.kind == StatementKind::kDrop) return;
    std::vector<std::string> names;
    for (const auto& r : st.relations)
      if (!r.cte && r.schema.empty() && r.role != RelationRef::Role::kLockTarget)
        names.push_back(r.name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    note_shadowable(names);
  }

  // Looks a relation that is not protected up in the catalog. *out is set
  // when reading or writing it reaches a protected table; false: denied.
  bool classify(const RelationRef& r, const CatalogRelation** out) {
    *out = nullptr;
    const ObjectCatalog* catalog = inputs_.catalog;
    if (!catalog) {
      if (inputs_.require_catalog)
        return deny(rules::kCatalogNotRead, r.schema.empty() ? r.name : r.schema + "." + r.name);
      return true;
    }
    const auto found = catalog->relations(r.schema, r.name);
    if (found.empty()) {
      const auto& system = catalog->facts().system_relation_names;
      const bool system_schema = r.schema == "pg_catalog" || r.schema == "information_schema";
      if ((r.schema.empty() || system_schema) && system.find(r.name) != system.end()) return true;
      if (!absent(r.name)) note_unknown(r.name);
      return true;
    }
    const CatalogRelation* reaching = nullptr;
    for (const auto* c : found) {
      const bool child = c->cls == RelationClass::kChild &&
                         !std::binary_search(context_.exempt_tables.begin(),
                                             context_.exempt_tables.end(), c->protected_parent);
      if (child || reaches(*c, false) || reaches(*c, true)) reaching = c;
    }
    if (!reaching) return true;
    if (found.size() > 1) return deny(rules::kAmbiguousObject, r.name);
    *out = reaching;
    return true;
  }

  // A read of a relation that reaches a protected table: a view is expanded
  // in place; anything else kanon cannot mask is denied.
  bool plan_reaching(const Statement& st, StatementClass cls, const CatalogRef& c) {
    const RelationRef& r = *c.ref;
    const CatalogRelation& rel = *c.relation;
    if (r.role == RelationRef::Role::kLockTarget) return true;
    if (!reaches(rel, false)) {
      // Only writing it reaches a protected table (triggers, rules).
      if (r.role == RelationRef::Role::kOther)
        return deny(rules::kWriteProtected, describe(rel, true));
      return true;
    }
    if (rel.read.internal) return deny(rules::kKanonInternal, describe(rel, false));
    switch (rel.cls) {
      case RelationClass::kDerived:
        return deny(rules::kDerivedRelation, describe(rel, false));
      case RelationClass::kView:
        break;
      case RelationClass::kOpaque:
        return deny(rules::kOpaqueRelation, describe(rel, false));
      default:
        return deny(rules::kUnsupportedReference, describe(rel, false));
    }
    if (effective(rel.read).opaque) return deny(rules::kOpaqueRelation, describe(rel, false));
    std::string body;
    if (!expand_view(rel, r.restrictions, body)) return false;
    const auto make_item = [&] {
      return body + (r.has_alias ? "" : " AS " + policy::quote_identifier(r.name));
    };
    bool ok = false;
    if (r.role == RelationRef::Role::kRead)
      ok = splice_from_item(r, make_item);
    else if (r.role == RelationRef::Role::kCopySource)
      ok = cls == StatementClass::kCopy && splice_copy(st, r, make_item);
    if (!ok) return deny(rules::kUnsupportedReference, describe(rel, false));
    return true;
  }

  // `body`: "(<the view's definition, planned like any query>)". What the
  // statement's WHERE restricts the view's columns to restricts the columns
  // of the relation the definition passes them on from (Statement::passed_on).
  bool expand_view(const CatalogRelation& view, const std::vector<ColumnRestriction>& restricted,
                   std::string& body) {
    const std::string name = qualified(*view.facts);
    if (depth_ >= kMaxViewDepth) return deny(rules::kUnsupportedReference, name);
    // pg_get_viewdef printed it with standard_conforming_strings on; the
    // session may have it off: constants holding a backslash are spelled
    // E'...', which reads alike either way (string_literals.h).
    std::string definition = view.facts->definition;
    if (definition.find('\\') != std::string::npos) {
      auto respelled = standard_text(definition, true);
      if (!respelled) return deny(rules::kStandardConformingStrings, name);
      definition = std::move(*respelled);
    }
    ParseOutcome parsed = parse_sql(definition, true);
    if (!parsed.ok || parsed.statements.size() != 1 ||
        classify_statement(parsed.statements.front().kind) != StatementClass::kQuery)
      return deny(rules::kUnsupportedReference, name);
    Statement& definition_st = parsed.statements.front();
    for (const auto& restriction : restricted)
      for (const auto& p : definition_st.passed_on)
        if (p.output == restriction.column) {
          ColumnRestriction on_relation = restriction;
          on_relation.column = p.column;
          definition_st.relations.at(p.relation).restrictions.push_back(std::move(on_relation));
        }
    Planner inner(definition, inputs_, depth_ + 1);
    inner.plan(definition_st);
    RewritePlan planned = inner.take();
    if (planned.denied) return deny(*planned.denied, planned.object + " in view " + name);
    plan_.unknown.insert(plan_.unknown.end(), planned.unknown.begin(), planned.unknown.end());
    plan_.unknown_used.insert(plan_.unknown_used.end(), planned.unknown_used.begin(),
                              planned.unknown_used.end());
    plan_.tables.insert(plan_.tables.end(), planned.tables.begin(), planned.tables.end());
    plan_.late_code = plan_.late_code || planned.late_code;
    note_shadowable(planned.shadowable);
    plan_.inline_masks = plan_.inline_masks || planned.inline_masks;
    plan_.function_masks = plan_.function_masks || planned.function_masks;
    plan_.copies_constants = plan_.copies_constants || planned.copies_constants;
    body = "(" + apply_edits(definition, std::move(planned.edits)) + ")";
    // A security_barrier view keeps outer conditions from being pushed below
    // its own: an OFFSET 0 subquery is not flattened.
    if (view.facts->security_barrier)
      body = "(SELECT * FROM " + body + " AS " + policy::quote_identifier(view.facts->name) +
             " OFFSET 0)";
    return true;
  }

  // Every function the statement calls, by name: denied when one of that
  // name can read a protected table or runs code kanon cannot analyse.
  bool check_functions(const Statement& st) {
    const ObjectCatalog* catalog = inputs_.catalog;
    if (!catalog) {
      if (inputs_.require_catalog && !st.functions.empty())
        return deny(rules::kCatalogNotRead, st.functions.front().name);
      return true;
    }
    for (const auto& f : st.functions) {
      const auto found = catalog->functions(f.schema, f.name);
      if (found.empty()) {
        if (!absent(f.name)) note_unknown(f.name);
        continue;
      }
      for (const auto* c : found) {
        plan_.late_code = plan_.late_code || c->reach.late_code;
        note_shadowable(c->reach);
        const Reach e = effective(c->reach);
        std::string object = c->facts->schema + "." + c->facts->name;
        if (e.internal) return deny(rules::kKanonInternal, object + " (reads " + e.via + ")");
        if (!e.any() || allowed(*c->facts, e)) continue;
        // Opaque code runs with the login's privileges, which cannot read
        // protected data (a SECURITY DEFINER one it may run would have
        // made that false).
        if (e.tables.empty() && unprivileged()) continue;
        if (!e.tables.empty()) {
          object += " (reaches " + e.tables.front() + ")";
          return deny(rules::kReachingFunction, object);
        }
        if (!e.via.empty() && e.via != object) object += " (calls " + e.via + ")";
        return deny(rules::kOpaqueFunction, object);
      }
    }
    return true;
  }

  // Whether opaque code the statement runs is harmless because the login
  // cannot read protected data (PlanContext::reads_nothing_protected): not
  // while an event trigger runs code that reaches a protected table, or
  // opaque code, with its owner's rights (SECURITY DEFINER): PostgreSQL runs
  // it on any DDL, also DDL the opaque code runs, without asking for EXECUTE.
  bool unprivileged() {
    if (!context_.reads_nothing_protected) return false;
    if (!definer_event_trigger_) {
      definer_event_trigger_ = false;
      if (const ObjectCatalog* catalog = inputs_.catalog)
        for (const auto& t : catalog->facts().event_triggers) {
          if (t.kanon_watch) continue;
          const CatalogFunction* c = catalog->function(t.function);
          if (!c || !c->facts ||
              (c->facts->security_definer && effective(c->reach).any() &&
               !allowed(*c->facts, effective(c->reach)))) {
            definer_event_trigger_ = true;
            break;
          }
        }
    }
    return !*definer_event_trigger_;
  }

  // Event triggers (catalog::EventTriggerFacts) run their function on the
  // DDL of every session: a statement that runs DDL, or code that may, is
  // decided with what those functions reach, as a call of them would be,
  // naming the trigger. kanon's own catalog watch reads no table.
  bool check_event_triggers(const Statement& st) {
    const ObjectCatalog* catalog = inputs_.catalog;
    if (!catalog || !fires_event_triggers(st)) return true;
    // Decided only with the ones firing now: the caller confirms them first.
    if (!context_.event_triggers_confirmed) {
      plan_.confirm_event_triggers = true;
      return true;
    }
    for (const auto& t : catalog->facts().event_triggers) {
      if (t.kanon_watch) continue;
      const std::string object = "event trigger " + t.name;
      const CatalogFunction* c = catalog->function(t.function);
      if (!c || !c->facts)
        return deny(rules::kEventTrigger, object + " (runs an unknown function)");
      const Reach e = effective(c->reach);
      const std::string runs = object + " (runs " + c->facts->schema + "." + c->facts->name;
      if (e.internal) return deny(rules::kEventTrigger, runs + ", reads " + e.via + ")");
      if (!e.any() || allowed(*c->facts, e)) continue;
      if (e.tables.empty() && !c->facts->security_definer && unprivileged()) continue;
      if (!e.tables.empty())
        return deny(rules::kEventTrigger, runs + ", reaches " + e.tables.front() + ")");
      return deny(rules::kEventTrigger, runs + ", code kanon cannot analyse)");
    }
    return true;
  }

  // Statements PostgreSQL fires event triggers for (CREATE, ALTER, DROP,
  // COMMENT, GRANT, REVOKE, SECURITY LABEL, SELECT INTO and CREATE TABLE AS,
  // REFRESH MATERIALIZED VIEW, ...), or that run code which may run DDL (DO,
  // CALL). Every statement kanon treats as a write or DDL counts, but the
  // writes and maintenance PostgreSQL fires none for: more, never fewer.
  static bool fires_event_triggers(const Statement& st) {
    if (st.select_into || st.kind == StatementKind::kDo || st.kind == StatementKind::kCall)
      return true;
    if (st.kind == StatementKind::kExplain)
      return classify_statement(st.inner_kind) == StatementClass::kWrite;
    if (classify_statement(st.kind) != StatementClass::kWrite &&
        st.kind != StatementKind::kCreateFunction)
      return false;
    switch (st.kind) {
      case StatementKind::kInsert:
      case StatementKind::kUpdate:
      case StatementKind::kDelete:
      case StatementKind::kMerge:
      case StatementKind::kTruncate:
      case StatementKind::kVacuum:
      case StatementKind::kCluster:
      case StatementKind::kReindex:
        return false;
      default:
        return st.node != "LockStmt" && st.node != "CheckPointStmt";
    }
  }

  // Code PostgreSQL runs without a function name in the text: every
  // user-defined operator whose symbol the statement contains (also written
  // as OPERATOR(schema.sym)) or that IN, BETWEEN, ORDER BY, GROUP BY, joins
  // ... may apply (=, <, ~~ and friends), every user-defined cast and every
  // function a user-defined type runs on its values (a domain's CHECK or
  // DEFAULT, a range's subtype_diff or canonical function). The
  // same rule as for SQL function bodies (object_catalog.h), decided on the
  // statement's text: a symbol inside a literal counts too (over-denies,
  // never under-denies).
  bool check_implicit_code(const Statement& st) {
    const ObjectCatalog* catalog = inputs_.catalog;
    if (!catalog) return true;
    // What every user-defined operator, cast and type's code together
    // reach: nothing, and no function read late (the usual case), settles it
    // without looking at the text.
    const bool reaching = effective(catalog->implicit_reach()).any();
    if (!reaching && !catalog->implicit_reach().late_code) return true;
    const auto& facts = catalog->facts();
    const std::string_view text = statement_text(st);
    const auto check = [&](uint32_t function, const std::string& what) {
      const CatalogFunction* c = catalog->function(function);
      if (!c || !c->facts)
        return deny(rules::kOpaqueFunction, what + " (runs an unknown function)");
      plan_.late_code = plan_.late_code || c->reach.late_code;
      note_shadowable(c->reach);
      if (!reaching) return true;
      const Reach e = effective(c->reach);
      std::string object = what + " (runs " + c->facts->schema + "." + c->facts->name;
      if (e.internal) return deny(rules::kKanonInternal, object + ", reads " + e.via + ")");
      if (!e.any() || allowed(*c->facts, e)) return true;
      if (!e.tables.empty())
        return deny(rules::kReachingFunction, object + ", reaches " + e.tables.front() + ")");
      if (!e.via.empty() && e.via != c->facts->schema + "." + c->facts->name)
        object += ", calls " + e.via;
      return deny(rules::kOpaqueFunction, object + ")");
    };
    for (const auto& op : facts.operators)
      if (text.find(op.name) != std::string_view::npos || implied_operator(op.name))
        if (!check(op.function, "operator " + op.schema + "." + op.name)) return false;
    for (uint32_t oid : facts.cast_functions)
      if (!check(oid, "a cast")) return false;  // may apply to any value: every statement
    for (uint32_t oid : facts.type_functions)
      if (!check(oid, "a type's code (domain CHECK or DEFAULT, range subtype_diff)"))
        return false;  // likewise
    return true;
  }

  // allowed_functions: every protected table the function may reach lists
  // it (all of them when it is opaque).
  bool allowed(const catalog::FunctionFacts& f, const Reach& reach) const {
    const std::string name = f.schema + "." + f.name;
    const auto lists = [&](const ProtectedTable* t) {
      if (t && std::binary_search(context_.exempt_tables.begin(), context_.exempt_tables.end(),
                                  t->policy_name))
        return true;
      if (!t || !t->snapshot) return false;
      const auto& a = t->snapshot->policy.allowed_functions;
      return std::find(a.begin(), a.end(), name) != a.end();
    };
    if (reach.opaque) return index_.all_of(lists);
    for (const auto& table : reach.tables) {
      const ProtectedTable* t = nullptr;
      const auto [schema, rel] = split_name(table);
      index_.find(schema, rel, search_path_, &t);
      if (!lists(t)) return false;
    }
    return true;
  }

  // DDL that names (drops, alters, grants on, ...) a relation that reaches a
  // protected table.
  bool check_named_objects(const Statement& st, const Rule& rule) {
    if (!inputs_.catalog) return true;
    for (const auto& n : st.names)
      for (const auto* c : inputs_.catalog->relations("", n))
        if (c->cls != RelationClass::kPlain || reaches(*c, false) || reaches(*c, true))
          return deny(rule, describe(*c, false));
    return true;
  }

  bool deny(const Rule& rule, std::string object) {
    plan_.denied = &rule;
    plan_.object = std::move(object);
    return false;
  }

  // The name tokens of `r` in the text, checked against what the parser saw.
  bool locate_name(const RelationRef& r, std::vector<NameToken>& parts) const {
    if (r.location < 0) return false;
    const size_t want = 1 + (r.schema.empty() ? 0 : 1) + (r.catalog.empty() ? 0 : 1);
    parts = read_dotted_name(sql_, static_cast<size_t>(r.location), want, false);
    if (parts.size() != want) return false;
    size_t i = 0;
    if (!r.catalog.empty() && parts[i++].value != r.catalog) return false;
    if (!r.schema.empty() && parts[i++].value != r.schema) return false;
    return parts[i].value == r.name;
  }

  // The FROM item that replaces the reference: the masked derived table (or
  // the materialized copy), aliased as the reference was (or by its name).
  // Whether the reference reads the table's materialized copy (no masks to
  // evaluate): the whole table, not a child.
  static bool reads_copy(const RelationRef& r, const ProtectedTable& t,
                         const catalog::RelationFacts* child) {
    const auto& snap = *t.snapshot;
    return !snap.materialized_name.empty() && !child && !t.child &&
           (r.inh || snap.info.children.empty());
  }

  // The masks call kanon_mask.released by name: the catalog of the moment
  // must hold exactly the function the build verified under it (an overload
  // added since would be the one PostgreSQL calls).
  bool mask_function_current(uint32_t verified) const {
    if (!verified || !inputs_.catalog) return false;
    const auto named = inputs_.catalog->functions(catalog::kMaskSchema, catalog::kMaskFunctionName);
    return named.size() == 1 && named[0]->facts->oid == verified;
  }

  // The statement's own text (the whole text may hold several).
  std::string_view statement_text(const Statement& st) const {
    return std::string_view(sql_).substr(
        static_cast<size_t>(std::max(0, st.location)),
        st.length > 0 ? static_cast<size_t>(st.length) : std::string_view::npos);
  }

  // Whether reading the reference evaluates mask expressions: everything but
  // a materialized copy (a view-mode view holds the masks).
  static bool evaluates_masks(const RelationRef& r, const ProtectedTable& t,
                              const catalog::RelationFacts* child) {
    return !reads_copy(r, t, child) ||
           t.snapshot->policy.mode != policy::EnforcementMode::kMaterialized;
  }

  // Whether `word` (lower case) appears in `text` as a word of its own, in
  // any case: anywhere, comments and literals included (a false yes only
  // costs the fence).
  static bool mentions_word(std::string_view text, std::string_view word) {
    const std::string low = base::lower(text);
    const auto ident = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
             static_cast<unsigned char>(c) >= 0x80;
    };
    for (size_t at = low.find(word); at != std::string::npos; at = low.find(word, at + 1)) {
      const size_t end = at + word.size();
      if ((at == 0 || !ident(low[at - 1])) && (end == low.size() || !ident(low[end]))) return true;
    }
    return false;
  }

  // What a statement says of the columns it reads, worked out once for all
  // its references.
  struct ColumnNaming {
    std::set<std::string> named;  // every identifier it names, anywhere
    bool star = false;            // a `*`
    bool natural = false;         // the word NATURAL (a join on every shared name)
    // Columns may be read without their names: `*`, NATURAL, a whole-row
    // reference (a column reference named like a FROM item or alias: `t`,
    // `to_json(t)`, `education(t)`, a join alias holding the table) or an
    // alias renaming columns by position (`AS t(a, b)`).
    bool unnamed = false;
  };

  ColumnNaming column_naming(const Statement& st) const {
    ColumnNaming n;
    n.named.insert(st.names.begin(), st.names.end());
    // Anywhere, comments and literals included: a false yes only costs the
    // narrower forms.
    n.natural = mentions_word(statement_text(st), "natural");
    const auto item_name = [&](const std::string& name) {
      for (const auto& rel : st.relations)
        if (rel.name == name) return true;
      return std::find(st.alias_names.begin(), st.alias_names.end(), name) != st.alias_names.end();
    };
    bool whole_row = false;
    for (const auto& c : st.columns) {
      n.star = n.star || c.star;
      whole_row = whole_row || (!c.star && !c.fields.empty() && item_name(c.fields.back()));
    }
    n.unnamed = n.star || n.natural || whole_row || st.alias_columns;
    return n;
  }

  // The first index (RelationFacts::indexes) of a relation the reference
  // scans (the table, or the child read, and with inheritance every child)
  // that orders or filters rows by one of the policy's quasi-identifiers;
  // "" when none (or no catalog to tell).
  std::string quasi_identifier_index(const RelationRef& r, const ProtectedTable& t,
                                     const catalog::RelationFacts* child) const {
    if (!inputs_.catalog) return {};
    const auto& qis = t.snapshot->policy.quasi_identifiers;
    const auto orders_by_qi = [&](const catalog::RelationFacts::Index& index) {
      return std::find_first_of(index.columns.begin(), index.columns.end(), qis.begin(),
                                qis.end()) != index.columns.end();
    };
    const catalog::RelationFacts* own = child ? child : child_facts(t.schema, t.table);
    if (child || !r.inh) {
      if (own)
        for (const auto& index : own->indexes)
          if (orders_by_qi(index)) return index.name;
      return {};
    }
    for (const auto* index : inputs_.catalog->tree_indexes(t.schema + "." + t.table))
      if (orders_by_qi(*index)) return index->name;
    return {};
  }

  // Whether a derived table listing `listed` (listed_columns; every column
  // when nullopt) computes a mask over raw columns: anything but a column
  // released as it is or a direct identifier's constant.
  static bool lists_masked_column(
      const std::optional<std::vector<const policy::ColumnMask*>>& listed) {
    return !listed || std::any_of(listed->begin(), listed->end(), [](const auto* m) {
      return m->role != policy::ColumnMask::Role::kDirectIdentifier &&
             m->expression != policy::quote_identifier(m->column);
    });
  }

  // The columns the derived table of reference `r` lists: those the
  // statement names anywhere, in table order, so that PostgreSQL neither
  // parses, plans nor computes a mask nothing reads; nullopt (every column)
  // when columns may be read unnamed (ColumnNaming::unnamed) and for COPY.
  // A column left out by mistake would be an error ("column does not
  // exist"), never another value.
  static std::optional<std::vector<const policy::ColumnMask*>> listed_columns(
      const ColumnNaming& naming, const RelationRef& r, const policy::TableSnapshot& snap) {
    if (r.role != RelationRef::Role::kRead || naming.unnamed) return std::nullopt;
    std::vector<const policy::ColumnMask*> out;
    for (const auto& m : snap.masks.columns)
      if (naming.named.count(m.column)) out.push_back(&m);
    return out;
  }

  // mode: materialized: " WHERE <guard>" for a read of the copy, which
  // raises for a snapshot older than the copy (a repeatable-read transaction
  // whose snapshot was taken before the refresh that swapped it in: the name
  // leads to the new table, whose rows that snapshot cannot see, so the read
  // would count nothing). The copy's pg_class row was written by that
  // refresh: a snapshot that cannot see it cannot see the rows either. A
  // one-time filter, as the masked view's guard (store/materializer.h). ""
  // for mode: view (the view carries its own guard). `c_function`: the same
  // check in C, kanon_mask.copy_current (maskfn/catalog_guard.c), which a
  // new backend does not plan as a subquery over pg_class.
  static std::string copy_snapshot_guard(const policy::TableSnapshot& snap, bool c_function) {
    if (snap.policy.mode != policy::EnforcementMode::kMaterialized) return {};
    const std::string message = policy::quote_literal(
        "kanon: this transaction's snapshot is older than the masked copy of " +
        snap.policy.name() + ", which a refresh replaced since: start a new transaction to " +
        "read it; snapshot ");
    const std::string copy = policy::quote_literal(snap.materialized_name);
    if (c_function)
      return " WHERE \"kanon_mask\".\"copy_current\"(" + copy + "::pg_catalog.regclass, " +
             message + ")";
    return " WHERE CASE WHEN EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid "
           "OPERATOR(pg_catalog.=) " +
           copy + "::pg_catalog.regclass::pg_catalog.oid) THEN true ELSE pg_catalog.concat(" +
           message + ", pg_catalog.pg_current_snapshot())::pg_catalog.bool END";
  }

  // The reference's replacement: the masked subquery (a child's own columns,
  // masked), the materialized copy or masked view, or, with `fence`, one of
  // them inside a subquery PostgreSQL keeps apart. `listed`: the columns to
  // list (listed_columns), all when nullopt.
  std::string masked_item(const RelationRef& r, const ProtectedTable& t,
                          const catalog::RelationFacts* child,
                          const std::optional<std::vector<const policy::ColumnMask*>>& listed,
                          bool fence = false) const {
    const auto& snap = *t.snapshot;
    const std::string alias = r.has_alias ? "" : " AS " + policy::quote_identifier(r.name);
    const bool copy = reads_copy(r, t, child);
    if (copy && !fence) {
      // The fence goes with masks only: a copy is read here, a view below.
      const std::string guard =
          copy_snapshot_guard(snap, inputs_.catalog && inputs_.catalog->facts().c_guard);
      if (guard.empty()) return snap.materialized_name + alias;
      return "(SELECT * FROM " + snap.materialized_name + guard + ")" + alias;
    }
    std::vector<const policy::ColumnMask*> columns;
    if (listed) {
      columns = *listed;
    } else {
      for (const auto& m : snap.masks.columns) columns.push_back(&m);
    }
    const auto joined = [&](bool with_masks) {
      std::string out;
      for (const auto* m : columns)
        out += (out.empty() ? "" : ", ") +
               (with_masks ? m->select_item() : policy::quote_identifier(m->column));
      return out;
    };
    // The fence: a WITH of its own (never referenced) keeps PostgreSQL from
    // pulling the subquery up, so it estimates the masked columns at its
    // defaults; nothing volatile, so a user's CTE around it is still inlined
    // and quals on other columns still reach the scan.
    std::string s = fence ? "(WITH \"kanon fence\" AS (SELECT) SELECT" : "(SELECT";
    bool first = true;
    const auto add = [&](const std::string& part) {
      if (part.empty()) return;
      s += first ? " " : ", ";
      s += part;
      first = false;
    };
    // A child's own columns; a masked view's columns by name; every mask
    // (the select list, built once per snapshot); or the listed masks.
    if (child)
      add(child_select_list(snap.masks, *child));
    else if (copy)
      add(joined(false));
    else if (listed)
      add(joined(true));
    else
      add(t.select_list);
    s += " FROM ";
    if (copy) {
      // A masked view (mode: view): its masks, pulled up into the fence.
      s += snap.materialized_name;
    } else {
      if (!r.inh) s += "ONLY ";
      // The relation kanon decided on, by its schema-qualified name (the
      // catalog's current one): PostgreSQL reads exactly that table whatever
      // the session's search_path.
      // A database name the user wrote stays: PostgreSQL refuses any but the
      // session's own, as it would have.
      if (!r.catalog.empty()) s += policy::quote_identifier(r.catalog) + ".";
      s += child ? policy::qualified_name(child->schema, child->name)
                 : policy::qualified_name(t.schema, t.table);
      // Rows the statement's WHERE keeps, decided on raw values first
      // (restriction_filter.h).
      if (!child) {
        const std::string filter = restriction_filter(
            r.restrictions, snap.masks, inputs_.catalog ? &inputs_.catalog->facts() : nullptr,
            context_.parse_message ? &context_.parameter_types : nullptr);
        if (!filter.empty()) copies_constants_ = true;
        s += filter;
      }
    }
    s += ')';
    if (fence) {
      std::string names;
      if (child) {
        for (const auto& col : child->columns)
          names += (names.empty() ? "" : ", ") + policy::quote_identifier(col.name);
      } else {
        names = joined(false);
      }
      s = "(SELECT" + (names.empty() ? "" : " " + names) + " FROM " + s + " AS \"kanon fenced\")";
    }
    s += alias;
    return s;
  }

  // [begin, end) of the reference including ONLY / ONLY ( ... ) / trailing *.
  bool reference_span(const RelationRef& r, const std::vector<NameToken>& parts, size_t& begin,
                      size_t& end) const {
    begin = parts.front().begin;
    end = parts.back().end;
    if (!r.inh) {
      size_t word = 0;
      std::string w = word_before(sql_, begin, word);
      if (w == "only") {
        begin = word;
      } else {
        size_t p = begin;
        while (p > 0 && std::isspace(static_cast<unsigned char>(sql_[p - 1]))) --p;
        if (p == 0 || sql_[p - 1] != '(') return false;
        if (word_before(sql_, p - 1, word) != "only") return false;
        const size_t close = skip_space(sql_, end);
        if (close >= sql_.size() || sql_[close] != ')') return false;
        begin = word;
        end = close + 1;
      }
    } else {
      const size_t star = skip_space(sql_, end);
      if (star < sql_.size() && sql_[star] == '*') end = star + 1;
    }
    return true;
  }

  // `make_item()`: the FROM item that replaces the reference.
  template <typename MakeItem>
  bool splice_from_item(const RelationRef& r, MakeItem make_item) {
    std::vector<NameToken> parts;
    if (!locate_name(r, parts)) return false;
    size_t begin = 0, end = 0;
    if (!reference_span(r, parts, begin, end)) return false;
    std::string item = make_item();
    if (r.table_form) {
      size_t word = 0;
      if (word_before(sql_, begin, word) != "table") return false;
      begin = word;
      item = "SELECT * FROM " + item;
    }
    plan_.edits.push_back({begin, end, std::move(item)});
    return true;
  }

  // COPY t [(cols)] TO STDOUT -> COPY (SELECT cols|* FROM <masked> AS t) TO STDOUT
  template <typename MakeItem>
  bool splice_copy(const Statement& st, const RelationRef& r, MakeItem make_item) {
    std::vector<NameToken> parts;
    if (!locate_name(r, parts)) return false;
    size_t end = parts.back().end;
    std::string columns = "*";
    if (st.copy_has_attlist) {
      const size_t open = skip_space(sql_, end);
      if (open >= sql_.size() || sql_[open] != '(') return false;
      const size_t close = matching_paren(sql_, open);
      if (close == std::string_view::npos) return false;
      columns = std::string(sql_.substr(open + 1, close - open - 2));
      end = close;
    }
    plan_.edits.push_back(
        {parts.front().begin, end, "(SELECT " + columns + " FROM " + make_item() + ")"});
    return true;
  }

  // schema.table.col (and catalog.schema.table.col, schema.table.*) of a
  // protected table: the derived table is named `table`, so drop the prefix.
  bool shorten_column(const ColumnReference& c) {
    const size_t qualifiers = c.star ? c.fields.size() : c.fields.size() - 1;
    if (c.fields.empty() || qualifiers < 2) return true;
    const std::string& schema = c.fields[qualifiers - 2];
    const std::string& table = c.fields[qualifiers - 1];
    const ProtectedTable* t = nullptr;
    if (find(schema, table, &t) != ProtectedIndex::Match::kFound) return true;
    if (c.location < 0) return false;
    const size_t total = c.fields.size() + (c.star ? 1 : 0);
    const auto parts = read_dotted_name(sql_, static_cast<size_t>(c.location), total, c.star);
    if (parts.size() != total) return false;
    for (size_t i = 0; i < c.fields.size(); ++i)
      if (parts[i].value != c.fields[i]) return false;
    plan_.edits.push_back({parts[0].begin, parts[qualifiers - 1].begin, ""});
    return true;
  }

  std::string_view sql_;
  const ProtectedIndex& index_;
  const PlanInputs& inputs_;
  const PlanContext& context_;
  std::optional<bool> definer_event_trigger_;  // unprivileged()
  const std::vector<std::string> search_path_;
  const int depth_;
  const Statement* current_ = nullptr;  // the CREATE FUNCTION check_code() is in
  bool dropping_ = false;               // planning a top-level DROP
  RewritePlan plan_;
  // masked_item wrote a restriction filter (RewritePlan::copies_constants).
  mutable bool copies_constants_ = false;
};

}  // namespace

RewritePlan plan_rewrite(std::string_view sql, const ParseOutcome& parsed,
                         const PlanInputs& inputs) {
  Planner planner(sql, inputs);
  for (const auto& st : parsed.statements)
    if (!planner.plan_top(st)) break;
  RewritePlan plan = planner.take();
  // A function PostgreSQL reads the body of when it calls it may run DDL.
  if (plan.late_code) plan.defines = true;
  return plan;
}

std::string apply_edits(std::string_view sql, std::vector<Edit> edits) {
  // An insertion goes before a replacement that begins where it is.
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::string out;
  size_t reserve = sql.size();
  for (const auto& e : edits) reserve += e.text.size();
  out.reserve(reserve);
  size_t at = 0;
  for (const auto& e : edits) {
    out.append(sql.substr(at, e.begin - at));
    out += e.text;
    at = e.end;
  }
  out.append(sql.substr(at));
  return out;
}

}  // namespace kanon::rewriter
