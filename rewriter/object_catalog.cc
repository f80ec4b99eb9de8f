#include "rewriter/object_catalog.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "catalog/kanon_schema.h"
#include "rewriter/sql_parser.h"
#include "rewriter/statement_rules.h"

namespace kanon::rewriter {
namespace {

using catalog::CatalogFacts;
using catalog::FunctionFacts;
using catalog::RelationFacts;

std::string qualified(const std::string& schema, const std::string& name) {
  return schema + "." + name;
}

// "schema.name" -> "name"
std::string_view bare(std::string_view qualified_name) {
  const size_t dot = qualified_name.rfind('.');
  return dot == std::string_view::npos ? qualified_name : qualified_name.substr(dot + 1);
}

}  // namespace

bool implied_operator(std::string_view name) {
  for (std::string_view s : {"=", "<>", "<", ">", "<=", ">=", "~~", "!~~", "~~*", "!~~*"})
    if (name == s) return true;
  return false;
}

namespace {

void merge_tables(std::vector<std::string>& into, const std::vector<std::string>& from) {
  if (from.empty()) return;
  std::vector<std::string> out;
  out.reserve(into.size() + from.size());
  std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(out));
  into = std::move(out);
}

// The reach graph: one node per relation read, one per relation write, one
// per function, and one for the functions of user-defined operators and
// casts. Each node has its own contribution and edges to the nodes whose
// reach it adds.
class ReachGraph {
 public:
  ReachGraph(const CatalogFacts& facts, const std::vector<std::string>& protected_tables,
             const std::vector<std::string>& internal_tables)
      : f_(facts), nr_(facts.relations.size()), nf_(facts.functions.size()) {
    const size_t n = 2 * nr_ + nf_ + 1;
    own_.resize(n);
    edges_.resize(n);
    reach_.resize(n);
    protected_.insert(protected_tables.begin(), protected_tables.end());
    internal_.insert(internal_tables.begin(), internal_tables.end());
    for (size_t i = 0; i < nr_; ++i) rel_index_.emplace(f_.relations[i].oid, i);
    for (size_t j = 0; j < nf_; ++j) fn_index_.emplace(f_.functions[j].oid, j);
    children_.resize(nr_);
    for (size_t i = 0; i < nr_; ++i)
      for (uint32_t p : f_.relations[i].parents)
        if (const auto it = rel_index_.find(p); it != rel_index_.end())
          children_[it->second].push_back(i);
    ancestors_.resize(nr_);
    for (size_t i = 0; i < nr_; ++i) find_protected_ancestors(i);
  }

  size_t rr(size_t i) const { return i; }
  size_t rw(size_t i) const { return nr_ + i; }
  size_t fn(size_t j) const { return 2 * nr_ + j; }
  size_t implicit() const { return 2 * nr_ + nf_; }  // every operator, cast, type's code

  void build() {
    for (size_t i = 0; i < nr_; ++i) {
      build_read(i);
      build_write(i);
    }
    for (size_t j = 0; j < nf_; ++j) build_function(j);
    for (const auto& op : f_.operators) edge_function(implicit(), op.function);
    for (uint32_t oid : f_.cast_functions) edge_function(implicit(), oid);
    for (uint32_t oid : f_.type_functions) edge_function(implicit(), oid);
    solve();
  }

  const Reach& reach(size_t node) const { return reach_[node]; }
  bool is_protected(size_t i) const { return protected_.count(name_of_rel(i)) > 0; }
  // kanon's own tables hold what it derived from raw rows (trees with their
  // row counts, snapshots, the release history) and what replicas adopt; the
  // audit trail's table (an input) holds every analyst's statements. Nothing
  // a restricted statement may read or write, directly or through a view or
  // function (rules::kKanonInternal where named). What kanon grants to
  // PUBLIC in its schema holds no row's data: its sequences (the catalog
  // generation every guard reads) and kanon.schema_version.
  bool is_internal(size_t i) const {
    const RelationFacts& r = f_.relations[i];
    if (r.schema == catalog::kKanonSchema) return r.kind != 'S' && r.name != "schema_version";
    return internal_.count(name_of_rel(i)) > 0;
  }
  // Protected ancestors, nearest first (breadth-first over pg_inherits).
  const std::vector<std::string>& protected_ancestors(size_t i) const { return ancestors_[i]; }

 private:
  std::string name_of_rel(size_t i) const {
    return qualified(f_.relations[i].schema, f_.relations[i].name);
  }
  std::string name_of_fn(size_t j) const {
    return qualified(f_.functions[j].schema, f_.functions[j].name);
  }
  std::string name_of(size_t node) const {
    if (node < nr_) return name_of_rel(node);
    if (node < 2 * nr_) return name_of_rel(node - nr_);
    if (node < 2 * nr_ + nf_) return name_of_fn(node - 2 * nr_);
    return "operators and casts";
  }

  void find_protected_ancestors(size_t i) {
    std::vector<size_t> queue = {i};
    std::unordered_set<size_t> seen = {i};
    for (size_t q = 0; q < queue.size(); ++q) {
      for (uint32_t p : f_.relations[queue[q]].parents) {
        const auto it = rel_index_.find(p);
        if (it == rel_index_.end() || !seen.insert(it->second).second) continue;
        const std::string name = name_of_rel(it->second);
        if (protected_.count(name)) ancestors_[i].push_back(name);
        queue.push_back(it->second);
      }
    }
  }

  void opaque(size_t node, const std::string& via) {
    Reach& o = own_[node];
    if (!o.any()) o.via = via;
    o.opaque = true;
  }

  void edge_relation_read(size_t node, uint32_t oid) {
    if (const auto it = rel_index_.find(oid); it != rel_index_.end()) {
      edges_[node].push_back(rr(it->second));
      return;
    }
    system_relation(node, oid);
  }

  void edge_relation_write(size_t node, uint32_t oid) {
    if (const auto it = rel_index_.find(oid); it != rel_index_.end()) {
      edges_[node].push_back(rr(it->second));
      edges_[node].push_back(rw(it->second));
      return;
    }
    system_relation(node, oid);
  }

  // pg_catalog's statistics views hold raw column values.
  void system_relation(size_t node, uint32_t oid) {
    const auto it = f_.system_relations.find(oid);
    if (it != f_.system_relations.end() && it->second.starts_with("pg_catalog.") &&
        is_statistics_relation(bare(it->second)))
      opaque(node, it->second);
  }

  void edge_function(size_t node, uint32_t oid) {
    if (const auto it = fn_index_.find(oid); it != fn_index_.end())
      edges_[node].push_back(fn(it->second));
  }

  void build_read(size_t i) {
    const RelationFacts& r = f_.relations[i];
    const size_t node = rr(i);
    const std::string name = name_of_rel(i);
    if (protected_.count(name)) {
      own_[node].tables = {name};
      own_[node].via = name;
      return;
    }
    if (!ancestors_[i].empty()) {
      own_[node].tables = ancestors_[i];
      std::sort(own_[node].tables.begin(), own_[node].tables.end());
      own_[node].via = ancestors_[i].front();
      return;
    }
    if (r.kind == 'f') opaque(node, name);
    if (is_internal(i)) {
      opaque(node, name);
      own_[node].internal = true;
      return;
    }
    if (r.kind == 'v' || r.kind == 'm') {
      for (uint32_t oid : r.reads_relations) edge_relation_read(node, oid);
      for (uint32_t oid : r.reads_functions) edge_function(node, oid);
    }
    for (uint32_t oid : r.policy_relations) edge_relation_read(node, oid);
    for (uint32_t oid : r.policy_functions) edge_function(node, oid);
    for (size_t c : children_[i]) edges_[node].push_back(rr(c));
  }

  void build_write(size_t i) {
    const RelationFacts& r = f_.relations[i];
    const size_t node = rw(i);
    edges_[node].push_back(rr(i));
    // Writing an automatically updatable view writes the relation below it.
    if (r.kind == 'v')
      for (uint32_t oid : r.reads_relations) edge_relation_write(node, oid);
    for (uint32_t oid : r.write_functions) edge_function(node, oid);
    for (uint32_t oid : r.write_relations) edge_relation_write(node, oid);
    for (size_t c : children_[i]) edges_[node].push_back(rw(c));
  }

  void build_function(size_t j) {
    const FunctionFacts& fx = f_.functions[j];
    const size_t node = fn(j);
    const std::string name = name_of_fn(j);
    own_[node].late_code =
        !fx.builtin && !fx.kanon_guard && fx.language != "c" && fx.language != "internal";
    if (denied_function(fx.name)) {
      opaque(node, name);
      return;
    }
    if (fx.builtin || fx.schema == "pg_catalog" || fx.kanon_guard || fx.type_constructor) return;
    // An atomic body's calls, and those of the arguments' DEFAULT
    // expressions, which the caller runs when it leaves an argument out.
    for (uint32_t oid : fx.reads_functions) edge_function(node, oid);
    if (fx.kind == 'a') {
      for (uint32_t oid : fx.support_functions) edge_function(node, oid);
      return;
    }
    if (fx.language == "sql") {
      if (fx.atomic) {
        for (uint32_t oid : fx.reads_relations) {
          if (fx.volatility == 'v')
            edge_relation_write(node, oid);
          else
            edge_relation_read(node, oid);
        }
        return;
      }
      sql_body(j);
      return;
    }
    if (!fx.extension.empty() && (fx.language == "c" || fx.language == "internal")) {
      if (fx.name.starts_with("dblink") || fx.name.starts_with("postgres_fdw_")) opaque(node, name);
      return;
    }
    opaque(node, name);
  }

  // A SQL function with a string body: every name it uses, resolved
  // conservatively (the caller's search_path is unknown).
  void sql_body(size_t j) {
    const FunctionFacts& fx = f_.functions[j];
    const size_t node = fn(j);
    const std::string name = name_of_fn(j);
    // PostgreSQL parses the body when the function runs, under the caller's
    // standard_conforming_strings (or the function's SET clause): a plain
    // constant holding a backslash would end elsewhere with it off, so
    // kanon's reading of the body is not the server's.
    const ParseOutcome parsed = parse_sql(fx.body);
    if (!parsed.ok || !literals_read_alike(fx.body)) {
      opaque(node, name);
      return;
    }
    for (const Statement& st : parsed.statements) {
      if (st.kind == StatementKind::kExecute ||
          (classify_statement(st.kind) == StatementClass::kDenied &&
           st.kind != StatementKind::kCall)) {
        opaque(node, name);
        continue;
      }
      const bool writes =
          st.kind != StatementKind::kSelect || !st.nested_writes.empty() || st.select_into;
      for (const RelationRef& ref : st.relations) {
        if (ref.cte) continue;
        if (ref.schema.empty()) merge_tables(own_[node].shadowable, {ref.name});
        if (names_statistics_relation(ref))
          opaque(node, ref.schema.empty() ? "pg_catalog." + ref.name : ref.schema + "." + ref.name);
        for (const RelationFacts* r : f_.relations_named(ref.name)) {
          if (!ref.schema.empty() && r->schema != ref.schema) continue;
          const size_t i = static_cast<size_t>(r - f_.relations.data());
          edges_[node].push_back(rr(i));
          if (writes) edges_[node].push_back(rw(i));
        }
      }
      for (const FunctionReference& call : st.functions) {
        for (const FunctionFacts* g : f_.functions_named(call.name)) {
          if (!call.schema.empty() && g->schema != call.schema) continue;
          edges_[node].push_back(fn(static_cast<size_t>(g - f_.functions.data())));
        }
      }
    }
    // Operators and casts run without their function's name in the text:
    // every operator whose symbol the body contains, or that PostgreSQL
    // applies for IN, BETWEEN, CASE, DISTINCT, GROUP BY, ORDER BY, LIKE
    // without it, and every cast created after initdb.
    for (const auto& op : f_.operators)
      if (fx.body.find(op.name) != std::string::npos || implied_operator(op.name))
        edge_function(node, op.function);
    for (uint32_t oid : f_.cast_functions) edge_function(node, oid);
  }

  // Tarjan's strongly connected components, iteratively; components come out
  // after every component they reach, so each one's reach is the union of
  // its members' own contributions and the reach of the edges leaving it.
  void solve() {
    const size_t n = own_.size();
    constexpr size_t kUnset = static_cast<size_t>(-1);
    std::vector<size_t> index(n, kUnset), low(n, 0);
    std::vector<bool> on_stack(n, false);
    std::vector<size_t> stack;
    std::vector<size_t> component(n, kUnset);
    struct Frame {
      size_t node;
      size_t next_edge;
    };
    std::vector<Frame> frames;
    size_t counter = 0;
    size_t components = 0;
    for (size_t start = 0; start < n; ++start) {
      if (index[start] != kUnset) continue;
      frames.push_back({start, 0});
      index[start] = low[start] = counter++;
      stack.push_back(start);
      on_stack[start] = true;
      while (!frames.empty()) {
        Frame& fr = frames.back();
        const size_t v = fr.node;
        if (fr.next_edge < edges_[v].size()) {
          const size_t w = edges_[v][fr.next_edge++];
          if (index[w] == kUnset) {
            index[w] = low[w] = counter++;
            stack.push_back(w);
            on_stack[w] = true;
            frames.push_back({w, 0});
          } else if (on_stack[w]) {
            low[v] = std::min(low[v], index[w]);
          }
          continue;
        }
        if (low[v] == index[v]) {
          std::vector<size_t> members;
          size_t w;
          do {
            w = stack.back();
            stack.pop_back();
            on_stack[w] = false;
            component[w] = components;
            members.push_back(w);
          } while (w != v);
          finish_component(members, component, components);
          ++components;
        }
        frames.pop_back();
        if (!frames.empty()) {
          const size_t parent = frames.back().node;
          low[parent] = std::min(low[parent], low[v]);
        }
      }
    }
  }

  void finish_component(const std::vector<size_t>& members, const std::vector<size_t>& component,
                        size_t id) {
    Reach all;
    for (size_t m : members) {
      merge_tables(all.tables, own_[m].tables);
      merge_tables(all.shadowable, own_[m].shadowable);
      all.opaque = all.opaque || own_[m].opaque;
      all.internal = all.internal || own_[m].internal;
      all.late_code = all.late_code || own_[m].late_code;
      for (size_t w : edges_[m]) {
        if (component[w] == id) continue;
        merge_tables(all.tables, reach_[w].tables);
        merge_tables(all.shadowable, reach_[w].shadowable);
        all.opaque = all.opaque || reach_[w].opaque;
        all.internal = all.internal || reach_[w].internal;
        all.late_code = all.late_code || reach_[w].late_code;
      }
    }
    for (size_t m : members) {
      reach_[m].tables = all.tables;
      reach_[m].shadowable = all.shadowable;
      reach_[m].opaque = all.opaque;
      reach_[m].internal = all.internal;
      reach_[m].late_code = all.late_code;
    }
    if (!all.any()) return;
    for (size_t m : members) {
      Reach& r = reach_[m];
      if (own_[m].any()) {
        r.via = own_[m].via;
        continue;
      }
      for (size_t w : edges_[m]) {
        const bool inside = component[w] == id;
        if (inside ? !all.any() : !reach_[w].any()) continue;
        // Writing a relation reaches what reading it does: name what it reads.
        if (m >= nr_ && m < 2 * nr_ && w == m - nr_ && !inside) {
          r.via = reach_[w].via;
        } else {
          r.via = name_of(w);
        }
        break;
      }
    }
  }

  const CatalogFacts& f_;
  const size_t nr_;
  const size_t nf_;
  std::unordered_set<std::string> protected_;
  std::unordered_set<std::string> internal_;
  std::unordered_map<uint32_t, size_t> rel_index_;
  std::unordered_map<uint32_t, size_t> fn_index_;
  std::vector<std::vector<size_t>> children_;
  std::vector<std::vector<std::string>> ancestors_;
  std::vector<Reach> own_;
  std::vector<std::vector<size_t>> edges_;
  std::vector<Reach> reach_;
};

}  // namespace

ObjectCatalog::ObjectCatalog(std::shared_ptr<const catalog::CatalogFacts> facts,
                             const std::vector<std::string>& protected_tables,
                             const std::vector<std::string>& internal_tables)
    : facts_(std::move(facts)) {
  if (!facts_) facts_ = std::make_shared<catalog::CatalogFacts>();
  // Name lookups resolve SQL bodies: facts filled by hand without index()
  // would resolve nothing (and reach too little), so index a copy.
  const bool indexed = (facts_->relations.empty() || facts_->relation(facts_->relations[0].oid)) &&
                       (facts_->functions.empty() || facts_->function(facts_->functions[0].oid));
  if (!indexed) {
    auto copy = std::make_shared<catalog::CatalogFacts>(*facts_);
    copy->index();
    facts_ = std::move(copy);
  }
  const auto& f = *facts_;
  ReachGraph graph(f, protected_tables, internal_tables);
  graph.build();
  relations_.resize(f.relations.size());
  for (size_t i = 0; i < f.relations.size(); ++i) {
    CatalogRelation& r = relations_[i];
    r.facts = &f.relations[i];
    r.read = graph.reach(graph.rr(i));
    r.write = graph.reach(graph.rw(i));
    r.internal = graph.is_internal(i);
    if (graph.is_protected(i)) {
      r.cls = RelationClass::kProtected;
    } else if (!graph.protected_ancestors(i).empty()) {
      r.cls = RelationClass::kChild;
      r.protected_parent = graph.protected_ancestors(i).front();
    } else if (r.facts->kind == 'f') {
      r.cls = RelationClass::kOpaque;
    } else if (r.facts->kind == 'v') {
      r.cls = r.read.opaque            ? RelationClass::kOpaque
              : !r.read.tables.empty() ? RelationClass::kView
                                       : RelationClass::kPlain;
    } else if (r.facts->kind == 'm') {
      r.cls = r.read.any() ? RelationClass::kDerived : RelationClass::kPlain;
    } else {
      r.cls = !r.read.tables.empty() ? RelationClass::kDerived
              : r.read.opaque        ? RelationClass::kOpaque
                                     : RelationClass::kPlain;
    }
  }
  // Indexes of protected tables and children, under the relation's own
  // name and every protected ancestor's.
  for (size_t i = 0; i < f.relations.size(); ++i) {
    const CatalogRelation& r = relations_[i];
    if (r.facts->indexes.empty() ||
        (r.cls != RelationClass::kProtected && r.cls != RelationClass::kChild))
      continue;
    std::vector<std::string> owners = graph.protected_ancestors(i);
    owners.push_back(r.facts->schema + "." + r.facts->name);
    for (const auto& owner : owners)
      for (const auto& index : r.facts->indexes) tree_indexes_[owner].push_back(&index);
  }
  functions_.resize(f.functions.size());
  for (size_t j = 0; j < f.functions.size(); ++j) {
    functions_[j].facts = &f.functions[j];
    functions_[j].reach = graph.reach(graph.fn(j));
  }
  implicit_ = graph.reach(graph.implicit());
}

std::vector<const CatalogRelation*> ObjectCatalog::relations(std::string_view schema,
                                                             std::string_view name) const {
  std::vector<const CatalogRelation*> out;
  for (const catalog::RelationFacts* r : facts_->relations_named(name)) {
    if (!schema.empty() && r->schema != schema) continue;
    out.push_back(&relations_[static_cast<size_t>(r - facts_->relations.data())]);
  }
  return out;
}

std::vector<const CatalogFunction*> ObjectCatalog::functions(std::string_view schema,
                                                             std::string_view name) const {
  std::vector<const CatalogFunction*> out;
  for (const catalog::FunctionFacts* g : facts_->functions_named(name)) {
    if (!schema.empty() && g->schema != schema) continue;
    out.push_back(&functions_[static_cast<size_t>(g - facts_->functions.data())]);
  }
  return out;
}

const std::vector<const catalog::RelationFacts::Index*>& ObjectCatalog::tree_indexes(
    const std::string& table) const {
  static const std::vector<const catalog::RelationFacts::Index*> none;
  const auto it = tree_indexes_.find(table);
  return it == tree_indexes_.end() ? none : it->second;
}

const CatalogRelation* ObjectCatalog::relation(uint32_t oid) const {
  const catalog::RelationFacts* r = facts_->relation(oid);
  return r ? &relations_[static_cast<size_t>(r - facts_->relations.data())] : nullptr;
}

const CatalogFunction* ObjectCatalog::function(uint32_t oid) const {
  const catalog::FunctionFacts* g = facts_->function(oid);
  return g ? &functions_[static_cast<size_t>(g - facts_->functions.data())] : nullptr;
}

}  // namespace kanon::rewriter
