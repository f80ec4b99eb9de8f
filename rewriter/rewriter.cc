#include "rewriter/rewriter.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "rewriter/catalog_guard.h"
#include "rewriter/literal_shape.h"
#include "rewriter/object_catalog.h"
#include "rewriter/protected_index.h"
#include "rewriter/rewrite_cache.h"
#include "rewriter/rewrite_plan.h"
#include "rewriter/sql_parser.h"

namespace kanon::rewriter {
namespace {

uint64_t combine(uint64_t seed, uint64_t v) {
  return (seed ^ (v + 0x9E3779B97F4A7C15ULL + (seed << 6) + (seed >> 2))) * 1099511628211ULL;
}

// INSERT ... VALUES whose first guarded item is typed by its column
// (RunShape::first_row): that column's type, schema-qualified, from the
// catalog; empty when kanon cannot tell it for sure (the target unknown, or
// relations of that name in several schemas disagree).
std::string values_cast(const Statement& st, const ObjectCatalog* catalog) {
  const auto& row = st.run.first_row;
  size_t item = 0;
  while (item < row.size() && row[item] == RunShape::ValuesItem::kDefault) ++item;
  if (!catalog || item == row.size() || row[item] != RunShape::ValuesItem::kUntyped) return "";
  const RelationRef* target = nullptr;
  for (const auto& r : st.relations) {
    if (r.role != RelationRef::Role::kOther || r.cte) continue;
    if (target) return "";  // a write in a WITH too: which is the INSERT's?
    target = &r;
  }
  if (!target) return "";
  std::string type;
  for (const CatalogRelation* c : catalog->relations(target->schema, target->name)) {
    const auto& columns = c->facts->columns;
    const policy::ColumnInfo* column = nullptr;
    if (st.run.insert_columns.empty()) {
      if (item < columns.size()) column = &columns[item];
    } else if (item < st.run.insert_columns.size()) {
      for (const auto& col : columns)
        if (col.name == st.run.insert_columns[item]) column = &col;
    }
    if (!column || column->sql_type.empty() || (!type.empty() && type != column->sql_type))
      return "";
    type = column->sql_type;
  }
  return type;
}

// Whether `st` gathers rows (catalog_guard.h, GuardCall::at_offset): GROUP
// BY, HAVING or DISTINCT at its top level, or a call of a function every
// function of that name is an aggregate of (in a subquery too: the choice
// is about cost only, both forms guard alike).
bool gathers_rows(const Statement& st, const ObjectCatalog* catalog) {
  if (st.run.groups) return true;
  if (!catalog) return false;
  return std::any_of(st.functions.begin(), st.functions.end(), [&](const auto& call) {
    const auto found = catalog->functions(call.schema, call.name);
    return !found.empty() && std::all_of(found.begin(), found.end(), [](const CatalogFunction* f) {
      return f->facts->kind == 'a';
    });
  });
}

// RewriteResult::leading_control: the transaction control that begins the
// text, when nothing kanon writes comes before the next statement's start.
void leading_control(std::string_view sql, const ParseOutcome& parsed,
                     const std::vector<Edit>& edits, RewriteResult& result) {
  int count = 0;
  while (count < static_cast<int>(parsed.statements.size()) &&
         parsed.statements[count].kind == StatementKind::kTransaction)
    ++count;
  if (count == 0) return;
  const auto at = static_cast<size_t>(parsed.statements[count].location);
  if (at == 0 || at > sql.size()) return;
  if (std::any_of(sql.begin(), sql.begin() + at, [](char c) { return (c & 0x80) != 0; })) return;
  // Edits are made to the original text; one before `at` would move it.
  if (std::any_of(edits.begin(), edits.end(), [at](const Edit& e) { return e.begin < at; })) return;
  result.leading_control = count;
  result.leading_control_bytes = at;
}

// Adds the catalog guard's edits for every statement that needs one; false
// when one needs it and kanon cannot place it, or the edits would overlap.
bool guard(std::string_view sql, const ParseOutcome& parsed, int64_t generation, bool hold,
           bool serial, const ObjectCatalog* catalog, std::vector<Edit>& edits) {
  std::vector<SqlToken> tokens;
  bool scanned = false;
  const size_t before = edits.size();
  for (const auto& st : parsed.statements) {
    if (st.run.kind == RunShape::Kind::kNone) continue;
    // A plain EXPLAIN runs nothing: guarded only for the serial marker, so
    // that the plan it shows is the one its statement runs.
    if (st.kind == StatementKind::kExplain && !st.explain_analyze && !serial) continue;
    if (!scanned && !scan_tokens(sql, tokens)) return false;
    scanned = true;
    const GuardCall call{generation,
                         hold,
                         serial,
                         values_cast(st, catalog),
                         gathers_rows(st, catalog),
                         catalog && catalog->facts().c_guard};
    if (place_catalog_guard(tokens, st, call, edits) == GuardPlacement::kNoPlace) return false;
  }
  if (edits.size() == before) return true;
  // Insertions sort before a replacement that begins where they are.
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < edits.size(); ++i)
    if (edits[i].begin < edits[i - 1].end) return false;
  return true;
}

// A decision by the statement's shape (literal_shape.h): one for every text
// of that shape, or `usable` false when each must be decided.
struct ShapedDecision {
  bool usable = false;
  RewriteResult result;  // kRewritten: `sql` a template (shape_template)
};

// What `result`, decided for `sql`, says of every statement of its shape.
// Shared: a pass, or a rewrite (masks, the catalog guard) whose edits leave
// the constants where they are and copy none (`copies_constants`: a
// restriction filter), when PostgreSQL's parse has each constant where no
// rule reads it (constants_are_inert). Not: denials, whose messages and
// positions are the text's own.
ShapedDecision shaped(std::string_view sql, const LiteralShape& shape, const RewriteResult& result,
                      const std::vector<Edit>& edits, bool copies_constants) {
  ShapedDecision d;
  const bool pass = result.verdict == Verdict::kPass;
  const bool rewritten = result.verdict == Verdict::kRewritten && !copies_constants;
  if (!pass && !rewritten) return d;
  if (shape.spans.front().begin < result.leading_control_bytes) return d;
  if (!constants_are_inert(sql, shape.spans)) return d;
  d.result = result;
  d.result.cache_hit = false;
  if (rewritten) {
    auto templ = shape_template(sql, edits, shape.spans);
    if (!templ ||
        static_cast<size_t>(std::count(templ->begin(), templ->end(), kSlot)) !=
            shape.spans.size() ||
        template_repeats_constants(*templ, sql, shape.spans))
      return {};
    d.result.sql = std::move(*templ);
  }
  d.usable = true;
  return d;
}

}  // namespace

// What planning needs of one snapshot, built once per snapshot version.
struct SnapshotIndexes {
  std::shared_ptr<const ProtectedIndex> index;
  std::shared_ptr<const ObjectCatalog> catalog;  // null: the snapshot has no catalog
};

struct Rewriter::Impl {
  explicit Impl(size_t capacity) : cache(capacity), shapes(capacity) {}

  // The indexes of the newest snapshot seen of each store (a store per
  // database): sessions of several databases do not rebuild each other's.
  SnapshotIndexes indexes_for(const store::PolicySnapshot& policies) {
    std::lock_guard lock(mu);
    Built& b = built[policies.store];
    if (!b.indexes.index || b.version != policies.version || b.identity != &policies ||
        b.generation != listed_generation) {
      std::vector<std::string> listed_tables = listed;
      listed_tables.insert(listed_tables.end(), policies.listed.begin(), policies.listed.end());
      b.indexes.index = std::make_shared<const ProtectedIndex>(policies, listed_tables);
      b.indexes.catalog.reset();
      if (policies.catalog) {
        std::vector<std::string> protected_tables = listed_tables;
        for (const auto& [name, table] : policies.tables) protected_tables.push_back(name);
        // A renamed table under its current name too (protected_index.h).
        for (const auto& [name, current] : renamed_tables(policies))
          protected_tables.push_back(current);
        for (const auto& [name, error] : policies.errors) protected_tables.push_back(name);
        b.indexes.catalog =
            std::make_shared<const ObjectCatalog>(policies.catalog, protected_tables, internal);
      }
      b.version = policies.version;
      b.identity = &policies;
      b.generation = listed_generation;
    }
    return b.indexes;
  }

  uint64_t generation() {
    std::lock_guard lock(mu);
    return listed_generation;
  }

  struct Built {
    SnapshotIndexes indexes;
    uint64_t version = 0;
    const store::PolicySnapshot* identity = nullptr;
    uint64_t generation = 0;
  };

  RewriteCache cache;
  LruCache<ShapedDecision> shapes;
  std::atomic<uint64_t> shape_hits{0};
  std::mutex mu;
  std::vector<std::string> listed;
  std::vector<std::string> internal;
  uint64_t listed_generation = 0;
  bool require_catalog = false;
  std::map<uint64_t, Built> built;  // by PolicySnapshot::store
};

RewriteResult make_denial(const Rule& rule, std::string object) {
  RewriteResult r;
  r.verdict = Verdict::kDenied;
  r.sqlstate = rule.sqlstate;
  r.rule = rule.id;
  r.message = denial_message(rule, object);
  r.object = std::move(object);
  return r;
}

RewriteResult lookup_denial(const RewriteResult& lookup) {
  RewriteResult r = lookup.unknown.empty()
                        ? make_denial(rules::kEventTrigger,
                                      "the event triggers that fire now (kanon could not "
                                      "compare them with the catalog it read)")
                        : make_denial(rules::kUnknownObject, lookup.unknown.front());
  r.fingerprint = lookup.fingerprint;
  return r;
}

Rewriter::Rewriter(size_t cache_capacity) : impl_(std::make_unique<Impl>(cache_capacity)) {}
Rewriter::~Rewriter() = default;

void Rewriter::set_listed_tables(std::vector<std::string> tables) {
  std::lock_guard lock(impl_->mu);
  impl_->listed = std::move(tables);
  ++impl_->listed_generation;
}

void Rewriter::set_internal_tables(std::vector<std::string> tables) {
  std::lock_guard lock(impl_->mu);
  impl_->internal = std::move(tables);
  ++impl_->listed_generation;  // catalogs are rebuilt, earlier plans not reused
}

void Rewriter::set_require_catalog(bool require) {
  std::lock_guard lock(impl_->mu);
  impl_->require_catalog = require;
  ++impl_->listed_generation;  // a new generation: earlier plans are not reused
}

std::shared_ptr<const ObjectCatalog> Rewriter::catalog_for(const store::PolicySnapshot& policies) {
  return impl_->indexes_for(policies).catalog;
}

CacheStats Rewriter::cache_stats() const {
  CacheStats out = impl_->cache.stats();
  out.shape_hits = impl_->shape_hits.load(std::memory_order_relaxed);
  // The exact lookup missed each of them first.
  out.hits += out.shape_hits;
  out.misses -= std::min(out.misses, out.shape_hits);
  return out;
}

RewriteResult Rewriter::rewrite(std::string_view sql, const store::PolicySnapshot& policies,
                                const PlanContext& context) {
  RewriteResult result;
  if (context.exempt) return result;  // exempt sessions see raw data; nothing to decide

  const uint64_t identity =
      combine(combine(reinterpret_cast<uintptr_t>(&policies), policies.store), impl_->generation());
  const std::string key = rewrite_cache_key(policies.version, identity, context, sql);
  if (auto cached = impl_->cache.get(key)) {
    cached->cache_hit = true;
    return *cached;
  }
  // The same statement with other integer constants (pgbench's `WHERE aid =
  // 123`, an ORM's `WHERE id IN (1, 2)`): its shape's decision.
  std::optional<LiteralShape> shape;
  if (impl_->shapes.keeps()) shape = literal_shape(sql);
  std::string shape_key;
  if (shape) {
    // The exact key's context prefix (rewrite_cache_key ends with the text).
    shape_key.reserve(key.size() - sql.size() + shape->key.size());
    shape_key.assign(key, 0, key.size() - sql.size());
    shape_key += shape->key;
    if (auto shaped = impl_->shapes.get(shape_key)) {
      if (shaped->usable) {
        RewriteResult r = std::move(shaped->result);
        if (r.verdict == Verdict::kRewritten) r.sql = fill_template(r.sql, sql, shape->spans);
        r.cache_hit = true;
        impl_->shape_hits.fetch_add(1, std::memory_order_relaxed);
        return r;
      }
      shape.reset();  // decided one by one
    }
  }

  const ParseOutcome parsed = parse_sql(sql);
  if (!parsed.ok) {
    result = make_denial(rules::kSyntax, "");
    result.message = parsed.error;
    result.position = parsed.error_offset > 0 ? parsed.error_offset : 0;
    impl_->cache.put(key, result);
    return result;
  }
  uint64_t fp = 1469598103934665603ULL;
  for (const auto& st : parsed.statements) fp = combine(fp, st.fingerprint);
  result.fingerprint = fp;

  SnapshotIndexes indexes;
  bool require_catalog = false;
  if (context.protected_database) {
    indexes = impl_->indexes_for(policies);
    std::lock_guard lock(impl_->mu);
    require_catalog = impl_->require_catalog;
  } else {
    static const store::PolicySnapshot kNothingProtected;
    static const auto kEmpty =
        std::make_shared<const ProtectedIndex>(kNothingProtected, std::vector<std::string>{});
    indexes.index = kEmpty;
  }
  const PlanInputs inputs{*indexes.index, indexes.catalog.get(), require_catalog, context};
  RewritePlan plan = plan_rewrite(sql, parsed, inputs);
  std::vector<Edit> shaped_edits;  // kRewritten with a shape: the edits made
  const bool copies_constants = plan.copies_constants;
  if (plan.denied) {
    const uint64_t fingerprint = result.fingerprint;
    result = make_denial(*plan.denied, std::move(plan.object));
    result.fingerprint = fingerprint;
  } else if (!plan.unknown.empty() || plan.confirm_event_triggers) {
    // Not cached: the answer depends on the database, not on the snapshot.
    result.verdict = Verdict::kLookup;
    result.unknown = std::move(plan.unknown);
    result.unknown_used = std::move(plan.unknown_used);
    result.event_triggers = plan.confirm_event_triggers;
    return result;
  } else {
    result.masked = !plan.edits.empty();
    result.shadowable = std::move(plan.shadowable);
    result.defines = plan.defines;
    result.late_code = plan.late_code;
    result.transaction_control =
        std::all_of(parsed.statements.begin(), parsed.statements.end(),
                    [](const Statement& st) { return st.kind == StatementKind::kTransaction; });
    const int64_t generation =
        indexes.catalog && policies.catalog ? policies.catalog->generation : 0;
    const bool serial = plan.inline_masks || (plan.function_masks && context.serial_masks);
    if (generation > 0 && !guard(sql, parsed, generation, plan.late_code, serial,
                                 indexes.catalog.get(), plan.edits)) {
      const uint64_t fingerprint = result.fingerprint;
      result = make_denial(rules::kCatalogGuard, "");
      result.fingerprint = fingerprint;
    } else {
      if (!result.transaction_control) leading_control(sql, parsed, plan.edits, result);
      if (!plan.edits.empty()) {
        result.verdict = Verdict::kRewritten;
        if (shape && !plan.copies_constants) shaped_edits = plan.edits;
        result.sql = apply_edits(sql, std::move(plan.edits));
        result.tables = std::move(plan.tables);
        if (generation > 0 && result.sql.size() != sql.size()) result.guard_generation = generation;
      }
    }
  }
  if (result.verdict != Verdict::kDenied)
    result.encoding_effect = encoding_effect(parsed, sql, indexes.catalog.get());
  // A plan that relied on names being absent holds only as long as they are.
  if (context.absent_names.empty()) {
    impl_->cache.put(key, result);
    if (shape)
      impl_->shapes.put(shape_key, shaped(sql, *shape, result, shaped_edits, copies_constants));
  }
  return result;
}

}  // namespace kanon::rewriter
