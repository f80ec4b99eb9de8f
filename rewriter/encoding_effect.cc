#include "rewriter/encoding_effect.h"

#include <optional>

#include "rewriter/object_catalog.h"
#include "rewriter/sql_parser.h"

namespace kanon::rewriter {
namespace {

using Kind = EncodingEffect::Kind;

// Views over views: deeper than this counts as code kanon has not read.
constexpr int kMaxDepth = 16;

bool is_set_config(const catalog::FunctionFacts& f) {
  return f.name == "set_config";
}

// Code shipped with the server, except set_config(), which changes settings.
bool builtin_code(const catalog::FunctionFacts* f) {
  return f != nullptr && f->builtin && !is_set_config(*f);
}

// Code that runs without its name in the statement (operators, casts, types'
// code): built in, a range type's constructor (the server's own code), or
// compiled code of an installed extension (PostGIS, citext, ...), which a
// restricted login cannot install (CREATE EXTENSION is denied) and which
// changes no setting of the session. SQL and PL functions anyone may have
// created are not.
bool shipped_code(const catalog::FunctionFacts* f) {
  return builtin_code(f) ||
         (f != nullptr &&
          (f->type_constructor ||
           (!f->extension.empty() && (f->language == "c" || f->language == "internal"))));
}

// Whether running a read of the statement may run code that is not built in.
class CodeCheck {
 public:
  CodeCheck(std::string_view sql, const ObjectCatalog* catalog) : sql_(sql), catalog_(catalog) {}

  bool runs_code(const Statement& st) {
    for (const auto& f : st.functions)
      if (f.name == "set_config") return true;
    if (!catalog_) {
      if (!st.functions.empty()) return true;
      for (const auto& r : st.relations)
        if (!r.cte) return true;
      return false;
    }
    const auto& facts = catalog_->facts();
    for (const auto& f : st.functions) {
      const auto candidates = facts.functions_named(f.name);
      bool found = false;
      for (const auto* c : candidates) {
        if (!f.schema.empty() && c->schema != f.schema) continue;
        found = true;
        if (!builtin_code(c)) return true;
      }
      if (!found) return true;  // the session's own, or unknown: not read
    }
    for (const auto& r : st.relations) {
      if (r.cte || r.schema == "pg_catalog" || r.schema == "information_schema") continue;
      bool found = false;
      for (const auto* c : facts.relations_named(r.name)) {
        if (!r.schema.empty() && c->schema != r.schema) continue;
        found = true;
        if (!relation_code_free(*c, 0)) return true;
      }
      if (!found && !(r.schema.empty() && facts.system_relation_names.count(r.name) > 0))
        return true;  // a temporary table (its own policies), or unknown
    }
    return implicit_code();
  }

 private:
  // Reading the relation runs only built-in code: its row security policies
  // and, for a view, everything its query reads and calls.
  bool relation_code_free(const catalog::RelationFacts& rel, int depth) {
    if (depth > kMaxDepth) return false;
    const auto& facts = catalog_->facts();
    for (uint32_t oid : rel.policy_functions)
      if (!builtin_code(facts.function(oid))) return false;
    for (uint32_t oid : rel.reads_functions)
      if (!builtin_code(facts.function(oid))) return false;
    for (const auto* list : {&rel.policy_relations, &rel.reads_relations})
      for (uint32_t oid : *list) {
        if (const auto* inner = facts.relation(oid)) {
          if (!relation_code_free(*inner, depth + 1)) return false;
        } else if (facts.system_relations.count(oid) == 0) {
          return false;
        }
      }
    return true;
  }

  // User-defined operators (when their symbol is in the text, or PostgreSQL
  // may apply them implicitly), casts and domain checks whose function is not
  // shipped code: PostgreSQL may run them in any statement.
  bool implicit_code() {
    if (implicit_) return *implicit_;
    const auto& facts = catalog_->facts();
    bool runs = false;
    for (const auto& op : facts.operators) {
      if (shipped_code(facts.function(op.function))) continue;
      if (implied_operator(op.name) || sql_.find(op.name) != std::string_view::npos) runs = true;
    }
    for (const auto* list : {&facts.cast_functions, &facts.type_functions})
      for (uint32_t oid : *list)
        if (!shipped_code(facts.function(oid))) runs = true;
    implicit_ = runs;
    return runs;
  }

  std::string_view sql_;
  const ObjectCatalog* catalog_;
  std::optional<bool> implicit_;
};

// Statements that only read (or do nothing that runs code): their effect is
// decided by what they read and call.
bool read_only(const Statement& st) {
  if (st.select_into || !st.nested_writes.empty()) return false;
  if (st.kind == StatementKind::kSelect) return true;
  if (st.kind == StatementKind::kExplain || st.kind == StatementKind::kDeclareCursor ||
      st.kind == StatementKind::kPrepare)
    return st.inner_kind == StatementKind::kSelect;
  if (st.kind == StatementKind::kCopy)
    return !st.copy_from && !st.copy_to_file &&
           (st.inner_node.empty() || st.inner_kind == StatementKind::kSelect);
  return false;
}

EncodingEffect statement_effect(const Statement& st, CodeCheck& code) {
  if (st.kind == StatementKind::kVariableSet) {
    if (st.subkind == "VAR_RESET_ALL") return {Kind::kReset, ""};
    if (st.setting != "client_encoding") return {};  // SET NAMES is client_encoding too
    if (st.subkind == "VAR_SET_DEFAULT" || st.subkind == "VAR_RESET") return {Kind::kReset, ""};
    if (st.subkind == "VAR_SET_CURRENT") return {};
    if (st.subkind == "VAR_SET_VALUE" && st.setting_values.size() == 1 &&
        !st.setting_values.front().empty())
      return {Kind::kSet, st.setting_values.front()};
    return {Kind::kAny, ""};
  }
  if (st.kind == StatementKind::kDiscard)
    return st.subkind == "DISCARD_ALL" ? EncodingEffect{Kind::kReset, ""} : EncodingEffect{};
  if (st.kind == StatementKind::kTransaction) {
    if (st.subkind == "TRANS_STMT_BEGIN" || st.subkind == "TRANS_STMT_START" ||
        st.subkind == "TRANS_STMT_SAVEPOINT" || st.subkind == "TRANS_STMT_RELEASE")
      return {};
    return {Kind::kTransactionEnd, ""};
  }
  if (st.kind == StatementKind::kVariableShow || st.kind == StatementKind::kDeallocate ||
      st.kind == StatementKind::kClosePortal || st.kind == StatementKind::kListen ||
      st.kind == StatementKind::kUnlisten || st.kind == StatementKind::kNotify)
    return {};
  if (read_only(st) && !code.runs_code(st)) return {};
  return {Kind::kAny, ""};
}

}  // namespace

EncodingEffect encoding_effect(const ParseOutcome& parsed, std::string_view sql,
                               const ObjectCatalog* catalog) {
  CodeCheck code(sql, catalog);
  EncodingEffect effect;
  for (const auto& st : parsed.statements) {
    EncodingEffect one = statement_effect(st, code);
    if (one.kind == Kind::kNone) continue;
    if (effect.kind != Kind::kNone) return {Kind::kAny, ""};  // two changes: not worth following
    effect = std::move(one);
  }
  return effect;
}

}  // namespace kanon::rewriter
