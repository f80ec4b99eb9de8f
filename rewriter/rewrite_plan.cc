#include "rewriter/rewrite_plan.h"

#include <algorithm>
#include <cctype>

#include "policy/sql_text.h"
#include "rewriter/sql_lexer.h"

namespace kanon::rewriter {
namespace {

bool is_write_kind(std::string_view kind) {
  return kind == "InsertStmt" || kind == "UpdateStmt" || kind == "DeleteStmt" ||
         kind == "MergeStmt" || kind == "TruncateStmt" || kind == "CopyStmt";
}

struct ProtectedRef {
  const RelationRef* ref;
  const ProtectedTable* table;
};

class Planner {
 public:
  Planner(std::string_view sql, const ProtectedIndex& index, const PlanContext& context)
      : sql_(sql),
        index_(index),
        context_(context),
        search_path_(parse_search_path(context.search_path)) {}

  // Adds the statement's edits to plan_; false (with plan_.denied set) when
  // the statement is denied.
  bool plan(const Statement& st) {
    const StatementClass cls = classify_statement(st.kind);
    if (cls == StatementClass::kDenied)
      return deny(denied_statement_rule(st.kind), statement_label(st.kind));
    for (const auto& f : st.functions)
      if (const Rule* rule = denied_function(f.name)) return deny(*rule, f.name);
    if (cls == StatementClass::kCopy && st.copy_to_file) return deny(rules::kCopyFile, "COPY");

    std::vector<ProtectedRef> refs;
    for (const auto& r : st.relations) {
      if (r.cte) continue;
      if (is_statistics_relation(r.name) && (r.schema.empty() || r.schema == "pg_catalog"))
        return deny(rules::kStatisticsView, r.name);
      const ProtectedTable* t = nullptr;
      const auto match = find(r.schema, r.name, &t);
      if (match == ProtectedIndex::Match::kAmbiguous) return deny(rules::kAmbiguousName, r.name);
      if (match == ProtectedIndex::Match::kFound) refs.push_back({&r, t});
    }

    // EXPLAIN can wrap CREATE TABLE AS / MATERIALIZED VIEW: a write too.
    const bool wraps_write = cls == StatementClass::kWrapper && !st.inner_kind.empty() &&
                             classify_statement(st.inner_kind) == StatementClass::kWrite;
    const bool write = cls == StatementClass::kWrite || wraps_write || st.select_into ||
                       !st.nested_writes.empty() || (cls == StatementClass::kCopy && st.copy_from);
    if (write) {
      const Rule& rule = is_write_kind(st.kind) || !st.nested_writes.empty()
                             ? rules::kWriteProtected
                             : rules::kDdlProtected;
      if (!refs.empty()) return deny(rule, refs.front().table->policy_name);
      if (cls == StatementClass::kWrite || wraps_write)
        for (const auto& n : st.names) {
          if (!index_.has_name(n)) continue;
          const ProtectedTable* t = nullptr;
          if (find("", n, &t) == ProtectedIndex::Match::kNone) continue;
          return deny(rule, t ? t->policy_name : n);
        }
      return true;
    }
    if (refs.empty()) return true;

    for (const auto& p : refs)
      if (!p.table->snapshot || p.table->snapshot->masks.columns.empty())
        return deny(rules::kPolicyNotBuilt, p.table->policy_name);
    for (const auto& c : st.columns)
      if (!c.star && !c.fields.empty() && is_system_column(c.fields.back()))
        return deny(rules::kSystemColumn, refs.front().table->policy_name + "." + c.fields.back());

    for (const auto& p : refs) {
      bool ok = true;
      switch (p.ref->role) {
        case RelationRef::Role::kRead:
          ok = splice_from_item(*p.ref, *p.table);
          break;
        case RelationRef::Role::kCopySource:
          ok = cls == StatementClass::kCopy && splice_copy(st, *p.ref, *p.table);
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
      if (!shorten_column(c)) return deny(rules::kUnsupportedReference, join(c.fields));
    return true;
  }

  RewritePlan take() {
    if (!plan_.denied) {
      std::sort(plan_.edits.begin(), plan_.edits.end(),
                [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
      for (size_t i = 1; i < plan_.edits.size(); ++i)
        if (plan_.edits[i].begin < plan_.edits[i - 1].end) {
          deny(rules::kUnsupportedReference, "overlapping references");
          break;
        }
    }
    if (plan_.denied) plan_.edits.clear();
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

  bool deny(const Rule& rule, std::string object) {
    plan_.denied = &rule;
    plan_.object = std::move(object);
    return false;
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : ".") + p;
    return s;
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
  std::string masked_item(const RelationRef& r, const ProtectedTable& t,
                          std::string_view name_text) const {
    const auto& snap = *t.snapshot;
    const std::string alias = r.has_alias ? "" : " AS " + policy::quote_identifier(r.name);
    if (!snap.materialized_name.empty() && !t.child && (r.inh || snap.info.children.empty()))
      return snap.materialized_name + alias;
    std::string s = "(SELECT ";
    s += t.select_list;
    s += " FROM ";
    if (!r.inh) s += "ONLY ";
    s += name_text;
    s += ')';
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

  bool splice_from_item(const RelationRef& r, const ProtectedTable& t) {
    std::vector<NameToken> parts;
    if (!locate_name(r, parts)) return false;
    size_t begin = 0, end = 0;
    if (!reference_span(r, parts, begin, end)) return false;
    const std::string_view name_text =
        sql_.substr(parts.front().begin, parts.back().end - parts.front().begin);
    std::string item = masked_item(r, t, name_text);
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
  bool splice_copy(const Statement& st, const RelationRef& r, const ProtectedTable& t) {
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
    const std::string_view name_text =
        sql_.substr(parts.front().begin, parts.back().end - parts.front().begin);
    plan_.edits.push_back({parts.front().begin, end,
                           "(SELECT " + columns + " FROM " + masked_item(r, t, name_text) + ")"});
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
  const PlanContext& context_;
  const std::vector<std::string> search_path_;
  RewritePlan plan_;
};

}  // namespace

RewritePlan plan_rewrite(std::string_view sql, const ParseOutcome& parsed,
                         const ProtectedIndex& index, const PlanContext& context) {
  Planner planner(sql, index, context);
  for (const auto& st : parsed.statements)
    if (!planner.plan(st)) break;
  return planner.take();
}

std::string apply_edits(std::string_view sql, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
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
