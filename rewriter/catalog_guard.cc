#include "rewriter/catalog_guard.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "catalog/mask_function.h"

namespace kanon::rewriter {
namespace {

using K = SqlToken::Kind;

// Tokens [first, last) of a statement, with each one's parenthesis depth
// relative to the first.
class TokenRange {
 public:
  TokenRange(const std::vector<SqlToken>& tokens, size_t first, size_t last)
      : t_(tokens), first_(first), last_(last) {
    int depth = 0;
    for (size_t i = first; i < last; ++i) {
      if (tokens[i].kind == K::kClose) --depth;
      depth_.push_back(depth);
      if (tokens[i].kind == K::kOpen) ++depth;
    }
  }

  size_t first() const { return first_; }
  size_t last() const { return last_; }
  const SqlToken& at(size_t i) const { return t_[i]; }
  int depth(size_t i) const { return depth_[i - first_]; }

  // The first token of `kind` at depth 0 in [from, last), if any.
  std::optional<size_t> find(K kind, size_t from) const {
    for (size_t i = from; i < last_; ++i)
      if (depth(i) == 0 && t_[i].kind == kind) return i;
    return std::nullopt;
  }

  // The first depth-0 FROM that begins a FROM list (not IS DISTINCT FROM).
  std::optional<size_t> find_from_list(size_t from) const {
    for (size_t i = from; i < last_; ++i)
      if (depth(i) == 0 && t_[i].kind == K::kFrom &&
          (i == first_ || t_[i - 1].kind != K::kDistinct))
        return i;
    return std::nullopt;
  }

  // The first depth-0 token of one of `kinds` in [from, last).
  std::optional<size_t> find_any(std::initializer_list<K> kinds, size_t from) const {
    for (size_t i = from; i < last_; ++i)
      if (depth(i) == 0)
        for (K k : kinds)
          if (t_[i].kind == k) return i;
    return std::nullopt;
  }

  // The token after the parenthesis group opened at `open`.
  std::optional<size_t> after_group(size_t open) const {
    for (size_t i = open + 1; i < last_; ++i)
      if (t_[i].kind == K::kClose && depth(i) == depth(open)) return i + 1;
    return std::nullopt;
  }

 private:
  const std::vector<SqlToken>& t_;
  size_t first_, last_;
  std::vector<int> depth_;
};

// Where the query a wrapper runs begins (sql_parser.h, RunShape).
std::optional<size_t> query_start(const TokenRange& r, const Statement& st) {
  if (st.kind == StatementKind::kSelect || st.kind == StatementKind::kCopy) return r.first();
  if (st.kind == StatementKind::kPrepare || st.kind == StatementKind::kCreateTableAs) {
    const auto as = r.find(K::kAs, r.first());
    return as ? std::optional<size_t>(*as + 1) : std::nullopt;
  }
  if (st.kind == StatementKind::kDeclareCursor) {
    const auto f = r.find(K::kFor, r.first());
    return f ? std::optional<size_t>(*f + 1) : std::nullopt;
  }
  if (st.kind == StatementKind::kExplain) {
    size_t i = r.first() + 1;  // EXPLAIN
    // An option list; `EXPLAIN (SELECT ...)`'s parentheses are the query's.
    if (st.explain_options && i < r.last() && r.at(i).kind == K::kOpen) {
      const auto after = r.after_group(i);
      if (!after) return std::nullopt;
      return after;
    }
    while (i < r.last() && (r.at(i).kind == K::kAnalyze || r.at(i).kind == K::kVerbose)) ++i;
    return i;
  }
  return std::nullopt;
}

// Where it ends: the range's end, or CREATE TABLE AS's WITH [NO] DATA.
size_t query_end(const TokenRange& r, const Statement& st, size_t start) {
  if (st.kind != StatementKind::kCreateTableAs) return r.last();
  for (size_t i = start; i + 1 < r.last(); ++i) {
    if (r.depth(i) != 0 || r.at(i).kind != K::kWith) continue;
    const K next = r.at(i + 1).kind;
    if (next == K::kData || (next == K::kNo && i + 2 < r.last() && r.at(i + 2).kind == K::kData))
      return i;
  }
  return r.last();
}

}  // namespace

std::string catalog_guard_call(const GuardCall& guard) {
  return fmt::format("\"{}\".\"{}\"({}::pg_catalog.int8){}",
                     guard.c_function ? catalog::kMaskSchema : "kanon",
                     guard.hold ? "catalog_stays" : "catalog_is", guard.generation,
                     guard.serial ? " AND \"kanon\".\"serial\"()" : "");
}

GuardPlacement place_catalog_guard(const std::vector<SqlToken>& tokens, const Statement& st,
                                   const GuardCall& guard, std::vector<Edit>& out) {
  const RunShape& run = st.run;
  // Every query is guarded, also one that names no relation or function:
  // an operator, a cast or a domain's CHECK can run code a DDL replaces.
  if (run.kind == RunShape::Kind::kNone || run.current_of) return GuardPlacement::kNotNeeded;
  // INSERT ... VALUES of several rows (or with DEFAULT): around an item of
  // its first row, when there is one it can go around (below).
  const auto guarded_item = [&]() -> std::optional<size_t> {
    for (size_t i = 0; i < run.first_row.size(); ++i) {
      if (run.first_row[i] == RunShape::ValuesItem::kDefault) continue;
      if (run.first_row[i] == RunShape::ValuesItem::kUntyped && guard.values_cast.empty())
        return std::nullopt;
      return i;
    }
    return std::nullopt;
  }();
  // No item it can go around (the first row all DEFAULT, a column with a
  // subscript or field, a string constant for a column kanon cannot type):
  // a function in the list or a trigger replaced meanwhile would run
  // unguarded, so the statement is denied (fail closed).
  if (run.kind == RunShape::Kind::kInsert && !run.simple && !run.one_values_row && !guarded_item)
    return GuardPlacement::kNoPlace;
  // The statement's tokens.
  const size_t begin = static_cast<size_t>(st.location);
  const size_t end = begin + static_cast<size_t>(st.length);
  size_t first = 0;
  while (first < tokens.size() && tokens[first].begin < begin) ++first;
  size_t last = first;
  while (last < tokens.size() && tokens[last].end <= end) ++last;
  if (first == last) return GuardPlacement::kNoPlace;
  if (run.in_parens) {  // COPY (query) TO: the query is the first group
    const TokenRange whole(tokens, first, last);
    const auto open = whole.find(K::kOpen, first);
    if (!open) return GuardPlacement::kNoPlace;
    const auto after = whole.after_group(*open);
    if (!after) return GuardPlacement::kNoPlace;
    first = *open + 1;
    last = *after - 1;
    if (first >= last) return GuardPlacement::kNoPlace;
  }
  const TokenRange r(tokens, first, last);
  const std::string call = catalog_guard_call(guard);
  const auto insert_at = [&](size_t pos, std::string text) {
    out.push_back({pos, pos, std::move(text)});
  };
  // The guard as the first conjunct of the WHERE clause found from token
  // `from` on (added when there is none), which ends before the first of
  // `stops` or with the query.
  const auto guard_where = [&](size_t from, const std::vector<K>& stops, bool on_conflict) {
    const auto stop_after = [&](size_t i) -> size_t {
      for (; i < r.last(); ++i) {
        if (r.depth(i) != 0) continue;
        const K k = r.at(i).kind;
        if (on_conflict && k == K::kOn && i + 1 < r.last() && r.at(i + 1).kind == K::kConflict)
          return i;
        for (K s : stops)
          if (k == s) return i;
      }
      return r.last();
    };
    const auto where = r.find(K::kWhere, from);
    // Before a WHERE, or the first stop after `from`: but a JOIN's ON is no
    // stop, and the FROM list holds no WHERE at depth 0.
    if (where) {
      const size_t stop = stop_after(*where + 1);
      if (stop == *where + 1) return false;  // WHERE with nothing after it
      insert_at(r.at(*where + 1).begin, call + " AND (");
      insert_at(r.at(stop - 1).end, ")");
    } else {
      const size_t stop = stop_after(from);
      insert_at(r.at(stop - 1).end, " WHERE " + call);
    }
    return true;
  };
  static const std::vector<K> kSelectStops = {K::kGroup, K::kHaving, K::kWindow,
                                              K::kOrder, K::kLimit,  K::kOffset,
                                              K::kFetch, K::kFor,    K::kSemicolon};
  static const std::vector<K> kInsertStops = {K::kGroup,     K::kHaving,   K::kWindow, K::kOrder,
                                              K::kLimit,     K::kOffset,   K::kFetch,  K::kFor,
                                              K::kReturning, K::kSemicolon};
  static const std::vector<K> kWriteStops = {K::kReturning, K::kSemicolon};
  switch (run.kind) {
    case RunShape::Kind::kUpdate:
    case RunShape::Kind::kDelete:
      return guard_where(first + 1, kWriteStops, false) ? GuardPlacement::kPlaced
                                                        : GuardPlacement::kNoPlace;
    case RunShape::Kind::kInsert:
    case RunShape::Kind::kSelect: {
      const bool insert = run.kind == RunShape::Kind::kInsert;
      if (!insert && guard.at_offset && run.simple && !run.limited) {
        // <query> OFFSET (CASE WHEN G THEN 0 ELSE -1 END), after its last
        // token (a semicolon, CREATE TABLE AS's WITH [NO] DATA end it).
        const auto start = query_start(r, st);
        if (!start || *start >= r.last()) return GuardPlacement::kNoPlace;
        const auto semicolon = r.find(K::kSemicolon, *start);
        const size_t stop = std::min(query_end(r, st, *start), semicolon.value_or(r.last()));
        if (stop <= *start) return GuardPlacement::kNoPlace;
        insert_at(r.at(stop - 1).end, " OFFSET (CASE WHEN " + call + " THEN 0 ELSE -1 END)");
        return GuardPlacement::kPlaced;
      }
      const auto select = r.find(K::kSelect, first);
      if (run.simple && select)
        return guard_where(*select + 1, insert ? kInsertStops : kSelectStops, insert)
                   ? GuardPlacement::kPlaced
                   : GuardPlacement::kNoPlace;
      if (insert && run.one_values_row) {
        // VALUES (<row>) -> SELECT <row> WHERE G
        const auto values = r.find(K::kValues, first);
        if (!values || *values + 1 >= r.last() || r.at(*values + 1).kind != K::kOpen)
          return GuardPlacement::kNoPlace;
        const auto after = r.after_group(*values + 1);
        if (!after) return GuardPlacement::kNoPlace;
        out.push_back({r.at(*values).begin, r.at(*values + 1).end, "SELECT "});
        out.push_back({r.at(*after - 1).begin, r.at(*after - 1).end, " WHERE " + call});
        return GuardPlacement::kPlaced;
      }
      if (insert && guarded_item) {
        // VALUES (a, b), (...) -> VALUES (a, (CASE WHEN G THEN b END)), (...):
        // evaluated with the first row, before any other row; a DEFAULT
        // before it runs first, and whatever it does is undone when the
        // guard fails the statement.
        const auto values = r.find(K::kValues, first);
        if (!values || *values + 1 >= r.last() || r.at(*values + 1).kind != K::kOpen)
          return GuardPlacement::kNoPlace;
        const size_t open = *values + 1;
        const auto after = r.after_group(open);
        if (!after) return GuardPlacement::kNoPlace;
        const int inside = r.depth(open) + 1;
        size_t begin = open + 1, item = 0;
        for (size_t i = open + 1; i < *after; ++i) {
          const bool ends = (r.at(i).kind == K::kComma && r.depth(i) == inside) || i + 1 == *after;
          if (!ends) continue;
          if (item == *guarded_item) {
            if (i == begin) return GuardPlacement::kNoPlace;
            std::string tail;
            if (run.first_row[item] == RunShape::ValuesItem::kUntyped) {
              tail.append("::");
              tail.append(guard.values_cast);
            }
            tail.append(" END)");
            insert_at(r.at(begin).begin, "(CASE WHEN " + call + " THEN ");
            insert_at(r.at(i - 1).end, std::move(tail));
            return GuardPlacement::kPlaced;
          }
          ++item;
          begin = i + 1;
        }
        return GuardPlacement::kNoPlace;
      }
      if (insert) return GuardPlacement::kNoPlace;
      break;  // a set operation, VALUES, TABLE name: wrapped below
    }
    case RunShape::Kind::kNone:
      return GuardPlacement::kNotNeeded;
  }
  // Wrapped, so the guard gates the whole query. SELECT INTO cannot be.
  if (st.select_into) return GuardPlacement::kNoPlace;
  const auto start = query_start(r, st);
  if (!start || *start >= r.last()) return GuardPlacement::kNoPlace;
  const size_t stop = query_end(r, st, *start);
  if (stop <= *start) return GuardPlacement::kNoPlace;
  insert_at(r.at(*start).begin, "SELECT * FROM (");
  insert_at(r.at(stop - 1).end, ") AS \"kanon query\" WHERE " + call);
  return GuardPlacement::kPlaced;
}

}  // namespace kanon::rewriter
