#include "rewriter/sql_parser.h"

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "rewriter/json_tree.h"
#include "rewriter/scanned_tokens.h"

namespace kanon::rewriter {
namespace {

using Kind = JsonValue::Kind;

constexpr uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr uint64_t kFnvPrime = 1099511628211ULL;
// The longest LIKE pattern a restriction reads (bytes).
constexpr size_t kMaxLikePattern = 256;

bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}

// Walks one statement's JSON tree and fills a Statement. Node objects come
// either wrapped ({"RangeVar": {...}}, for Node* fields) or bare (typed
// fields such as InsertStmt.relation); bare RangeVars are known by "relname".
class StatementWalker {
 public:
  StatementWalker(const JsonTree& tree, Statement& out, bool passed_on)
      : t_(tree), out_(out), passed_on_(passed_on) {}

  void walk_top(int32_t stmt) {
    const auto& wrapper = t_.at(stmt);
    if (wrapper.kind != Kind::kObject || wrapper.first_child < 0) return;
    const int32_t body = wrapper.first_child;
    top_body_ = body;
    out_.node = std::string(t_.at(body).key);
    out_.kind = statement_kind(out_.node);
    for (const char* field : {"query"}) {
      const int32_t q = t_.member(body, field);
      if (q >= 0 && t_.at(q).kind == Kind::kObject && t_.at(q).first_child >= 0) {
        out_.inner_node = std::string(t_.at(t_.at(q).first_child).key);
        out_.inner_kind = statement_kind(out_.inner_node);
      }
    }
    if (out_.kind == StatementKind::kCopy) {
      out_.copy_from = bool_member(body, "is_from");
      out_.copy_to_file = bool_member(body, "is_program") || t_.member(body, "filename") >= 0;
      out_.copy_has_attlist = t_.member(body, "attlist") >= 0;
    }
    if (out_.kind == StatementKind::kCreateFunction) read_function(body);
    if (out_.kind == StatementKind::kVariableSet || out_.kind == StatementKind::kVariableShow) {
      const int32_t n = t_.member(body, "name");
      if (n >= 0) out_.setting = std::string(t_.at(n).text);
    }
    if (out_.kind == StatementKind::kVariableSet || out_.kind == StatementKind::kTransaction ||
        out_.kind == StatementKind::kReindex)
      out_.subkind = std::string(string_member(body, "kind"));
    if (out_.kind == StatementKind::kDiscard)
      out_.subkind = std::string(string_member(body, "target"));
    if (out_.kind == StatementKind::kVariableSet) read_setting_values(body);
    if (out_.kind == StatementKind::kExplain) {
      out_.explain_options = t_.member(body, "options") >= 0;
      out_.explain_analyze = explain_analyze(body);
    }
    read_object_name(body);
    read_run_shape(body);
    visit_node(stmt, {}, {});
    // Restrictions go to their relations once every SELECT has been seen: a
    // CTE's relations are visited before the SELECTs of the statement's set
    // operation that name the CTE.
    for (const auto& [index, body] : relation_bodies_)
      for (auto& [var, found] : restrictions_)
        if (var == body)
          for (auto& f : found) out_.relations[index].restrictions.push_back(std::move(f));
    if (passed_on_ && out_.node == "SelectStmt") note_passed_on(body);
    out_.fingerprint = hash_;
  }

 private:
  struct Context {
    std::string_view parent_type;
    std::string_view parent_key;
  };

  // The name of the prepared statement or cursor a statement acts on.
  void read_object_name(int32_t body) {
    const StatementKind kind = out_.kind;
    if (kind == StatementKind::kPrepare || kind == StatementKind::kExecute ||
        kind == StatementKind::kDeallocate)
      out_.object_name = std::string(string_member(body, "name"));
    if (kind == StatementKind::kDeclareCursor || kind == StatementKind::kFetch ||
        kind == StatementKind::kClosePortal)
      out_.object_name = std::string(string_member(body, "portalname"));
    if (kind == StatementKind::kDeclareCursor) {
      constexpr int kCursorOptHold = 0x0020;  // PostgreSQL's CURSOR_OPT_HOLD
      const int32_t options = t_.member(body, "options");
      out_.cursor_hold = options >= 0 && t_.at(options).kind == Kind::kNumber &&
                         (t_.at(options).number & kCursorOptHold) != 0;
    }
  }

  // {"SelectStmt": {...}} -> its type and body.
  std::pair<std::string_view, int32_t> node_of(int32_t wrapper) const {
    if (wrapper < 0 || t_.at(wrapper).kind != Kind::kObject || t_.at(wrapper).first_child < 0)
      return {{}, -1};
    const int32_t first = t_.at(wrapper).first_child;
    return {t_.at(first).key, first};
  }

  bool has_current_of(int32_t body) const {
    return t_.member(t_.member(body, "whereClause"), "CurrentOfExpr") >= 0;
  }

  void read_select_shape(int32_t select) {
    const std::string_view op = string_member(select, "op");
    out_.run.has_from = t_.member(select, "fromClause") >= 0;
    const int32_t values = t_.member(select, "valuesLists");
    out_.run.simple = (op.empty() || op == "SETOP_NONE") && values < 0;
    out_.run.limited = t_.member(select, "limitCount") >= 0 ||
                       t_.member(select, "limitOffset") >= 0 ||
                       t_.member(select, "lockingClause") >= 0;
    out_.run.groups = t_.member(select, "groupClause") >= 0 ||
                      t_.member(select, "havingClause") >= 0 ||
                      t_.member(select, "distinctClause") >= 0;
    out_.run.one_values_row =
        values >= 0 && (op.empty() || op == "SETOP_NONE") && t_.member(select, "withClause") < 0 &&
        t_.at(values).first_child >= 0 && t_.at(t_.at(values).first_child).next_sibling < 0 &&
        !has_key(values, "SetToDefault");
  }

  // INSERT ... VALUES of several rows or with DEFAULT (RunShape::first_row).
  // Left empty when the INSERT names a column with a subscript or field
  // (`a[1]`, `a.b`): its items are not typed by a column.
  void read_values_rows(int32_t insert, int32_t select) {
    const int32_t values = t_.member(select, "valuesLists");
    const std::string_view op = string_member(select, "op");
    if (values < 0 || !(op.empty() || op == "SETOP_NONE")) return;
    std::vector<std::string> columns;
    if (const int32_t cols = t_.member(insert, "cols"); cols >= 0) {
      for (int32_t c = t_.at(cols).first_child; c >= 0; c = t_.at(c).next_sibling) {
        const auto [kind, target] = node_of(c);
        if (kind != "ResTarget" || t_.member(target, "indirection") >= 0) return;
        columns.emplace_back(string_member(target, "name"));
      }
    }
    const int32_t row = t_.at(values).first_child;
    if (row < 0) return;
    const int32_t items = t_.member(node_of(row).second, "items");
    if (items < 0) return;
    std::vector<RunShape::ValuesItem> kinds;
    for (int32_t i = t_.at(items).first_child; i >= 0; i = t_.at(i).next_sibling) {
      const auto [kind, item] = node_of(i);
      if (kind == "SetToDefault") {
        kinds.push_back(RunShape::ValuesItem::kDefault);
      } else if ((kind == "A_Const" &&
                  (t_.member(item, "sval") >= 0 || t_.member(item, "isnull") >= 0)) ||
                 kind == "ParamRef" || kind == "RowExpr") {
        // A parameter's type is inferred from its column, and a ROW(...)
        // becomes the column's composite type only as the item itself.
        kinds.push_back(RunShape::ValuesItem::kUntyped);
      } else {
        kinds.push_back(RunShape::ValuesItem::kTyped);
      }
    }
    out_.run.first_row = std::move(kinds);
    out_.run.insert_columns = std::move(columns);
  }

  // Whether a node named `key` is anywhere below `node`.
  bool has_key(int32_t node, std::string_view key) const {
    for (int32_t c = t_.at(node).first_child; c >= 0; c = t_.at(c).next_sibling)
      if (t_.at(c).key == key || has_key(c, key)) return true;
    return false;
  }

  // What the statement runs (RunShape).
  void read_run_shape(int32_t body) {
    std::string_view type = out_.node;
    int32_t node = body;
    RunShape& run = out_.run;
    if (type == "ExplainStmt" || type == "PrepareStmt" || type == "DeclareCursorStmt" ||
        type == "CopyStmt" || type == "CreateTableAsStmt") {
      if (type == "CreateTableAsStmt" && string_member(body, "objtype") != "OBJECT_TABLE") return;
      run.in_parens = type == "CopyStmt";
      std::tie(type, node) = node_of(t_.member(body, "query"));
      if (node < 0) return;
    }
    if (type == "SelectStmt") {
      run.kind = RunShape::Kind::kSelect;
      read_select_shape(node);
    } else if (type == "InsertStmt") {
      run.kind = RunShape::Kind::kInsert;
      const auto [inner, select] = node_of(t_.member(node, "selectStmt"));
      if (inner == "SelectStmt") {
        read_select_shape(select);
        if (!run.one_values_row) read_values_rows(node, select);
      }
    } else if (type == "UpdateStmt") {
      run.kind = RunShape::Kind::kUpdate;
      run.has_from = t_.member(node, "fromClause") >= 0;
      run.current_of = has_current_of(node);
    } else if (type == "DeleteStmt") {
      run.kind = RunShape::Kind::kDelete;
      run.has_from = t_.member(node, "usingClause") >= 0;
      run.current_of = has_current_of(node);
    }
  }

  // EXPLAIN ANALYZE, or an ANALYZE option (whatever its value). A plain
  // EXPLAIN gets the guard too (RunShape): the plan it shows is the one its
  // statement runs (serial where the masks must be).
  bool explain_analyze(int32_t body) const {
    const int32_t options = t_.member(body, "options");
    if (options < 0) return false;
    for (int32_t o = t_.at(options).first_child; o >= 0; o = t_.at(o).next_sibling)
      if (string_member(t_.member(o, "DefElem"), "defname") == "analyze") return true;
    return false;
  }

  // LANGUAGE and AS of CREATE FUNCTION / PROCEDURE (DefElems in "options").
  void read_function(int32_t body) {
    out_.function_sql_body = t_.member(body, "sql_body") >= 0;
    const int32_t options = t_.member(body, "options");
    if (options >= 0) {
      for (int32_t o = t_.at(options).first_child; o >= 0; o = t_.at(o).next_sibling) {
        const int32_t def = t_.member(o, "DefElem");
        if (def < 0) continue;
        const std::string_view name = string_member(def, "defname");
        const int32_t arg = t_.member(def, "arg");
        if (name == "language") {
          for (char c : string_member(t_.member(arg, "String"), "sval"))
            out_.function_language += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
        } else if (name == "as") {
          const int32_t items = t_.member(t_.member(arg, "List"), "items");
          if (items < 0) continue;
          const int32_t first = t_.at(items).first_child;
          if (first >= 0 && t_.at(first).next_sibling < 0)
            out_.function_body = std::string(string_member(t_.member(first, "String"), "sval"));
        }
      }
    }
    if (out_.function_language.empty() && out_.function_sql_body) out_.function_language = "sql";
  }

  // The arguments of SET: {"A_Const": {"sval": {"sval": "LATIN1"}}}, ...
  void read_setting_values(int32_t body) {
    const int32_t args = t_.member(body, "args");
    if (args < 0) return;
    for (int32_t a = t_.at(args).first_child; a >= 0; a = t_.at(a).next_sibling) {
      const int32_t sval = t_.member(t_.member(a, "A_Const"), "sval");
      out_.setting_values.emplace_back(sval >= 0 ? string_member(sval, "sval") : "");
    }
  }

  bool bool_member(int32_t obj, std::string_view key) const {
    const int32_t m = t_.member(obj, key);
    return m >= 0 && t_.at(m).kind == Kind::kBool && t_.at(m).boolean;
  }

  std::string_view string_member(int32_t obj, std::string_view key) const {
    const int32_t m = t_.member(obj, key);
    return m >= 0 && t_.at(m).kind == Kind::kString ? t_.at(m).text : std::string_view{};
  }

  // Eight bytes at a time (FNV-style multiply, then a length-tagged tail).
  void mix(std::string_view s) {
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      hash_ = (hash_ ^ w) * kFnvPrime;
      hash_ ^= hash_ >> 29;
    }
    uint64_t tail = s.size();
    for (; i < s.size(); ++i) tail = (tail << 8) | static_cast<unsigned char>(s[i]);
    hash_ = (hash_ ^ tail) * kFnvPrime;
    hash_ ^= hash_ >> 29;
  }

  // A value found under `key` of a node of type `parent_type`.
  void visit_node(int32_t v, std::string_view parent_type, std::string_view key) {
    const auto& val = t_.at(v);
    switch (val.kind) {
      case Kind::kArray:
        mix("[");
        for (int32_t c = val.first_child; c >= 0; c = t_.at(c).next_sibling)
          visit_node(c, parent_type, key);
        mix("]");
        return;
      case Kind::kObject: {
        const int32_t first = val.first_child;
        if (first >= 0 && t_.at(first).next_sibling < 0 && !t_.at(first).key.empty() &&
            is_upper(t_.at(first).key[0]) && t_.at(first).kind == Kind::kObject) {
          visit_body(t_.at(first).key, first, parent_type, key);
        } else {
          // Bare (typed) fields: RangeVar* anywhere, SelectStmt* as the arms
          // of a set operation.
          std::string_view type;
          if (t_.member(v, "aliasname") >= 0) record_alias(v);
          if (t_.member(v, "relname") >= 0)
            type = "RangeVar";
          else if (parent_type == "SelectStmt" && (key == "larg" || key == "rarg"))
            type = "SelectStmt";
          visit_body(type, v, parent_type, key);
        }
        return;
      }
      case Kind::kString:
      case Kind::kNumber:
        mix(val.text);
        return;
      case Kind::kBool:
        mix(val.boolean ? "t" : "f");
        return;
      case Kind::kNull:
        return;
    }
  }

  void visit_body(std::string_view type, int32_t body, std::string_view parent_type,
                  std::string_view key) {
    mix(type);
    if (type == "A_Const") return;  // literal values never reach the fingerprint
    if (type == "RangeVar") record_relation(body, parent_type, key);
    if (type == "ColumnRef") record_column(body);
    if (type == "FuncCall") record_function(body);
    if (type == "String") out_.names.emplace_back(string_member(body, "sval"));
    if ((type == "InsertStmt" || type == "UpdateStmt" || type == "DeleteStmt" ||
         type == "MergeStmt") &&
        depth_ >= 0)
      out_.nested_writes.emplace_back(type);
    if (type == "SelectStmt" && t_.member(body, "intoClause") >= 0) out_.select_into = true;
    if (type == "SelectStmt") note_restrictions(body);
    if (type == "ExecuteStmt") out_.executed.emplace_back(string_member(body, "name"));
    const bool table_form = type == "SelectStmt" && is_table_command(body);

    ++depth_;
    const int32_t with = t_.member(body, "withClause");
    size_t pushed = 0;
    if (with >= 0) pushed = visit_with(with);
    const bool was_locking = in_locking_;
    for (int32_t m = t_.at(body).first_child; m >= 0; m = t_.at(m).next_sibling) {
      const std::string_view k = t_.at(m).key;
      if (k == "withClause" || k == "location") continue;
      mix(k);
      if (k == "lockingClause") in_locking_ = true;
      const bool was_table_form = table_form_from_;
      table_form_from_ = table_form && k == "fromClause";
      visit_node(m, type, k);
      table_form_from_ = was_table_form;
      in_locking_ = was_locking;
    }
    ctes_.resize(ctes_.size() - pushed);
    --depth_;
  }

  // Visits the CTEs of a WITH clause with the names each one can see (all of
  // them when RECURSIVE, the earlier ones otherwise); returns how many names
  // it leaves in scope for the rest of the statement.
  size_t visit_with(int32_t with) {
    mix("with");
    const bool recursive = bool_member(with, "recursive");
    if (recursive) mix("recursive");
    std::vector<std::pair<std::string_view, int32_t>> ctes;  // name, CommonTableExpr body
    const int32_t list = t_.member(with, "ctes");
    if (list >= 0) {
      for (int32_t c = t_.at(list).first_child; c >= 0; c = t_.at(c).next_sibling) {
        const int32_t body = t_.at(c).first_child;
        if (body < 0) continue;
        ctes.emplace_back(string_member(body, "ctename"), body);
      }
    }
    const size_t base = ctes_.size();
    if (recursive)
      for (const auto& c : ctes) ctes_.push_back(c.first);
    for (const auto& c : ctes) {
      visit_body("CommonTableExpr", c.second, "WithClause", "ctes");
      if (!recursive) ctes_.push_back(c.first);
    }
    return ctes_.size() - base;
  }

  // `TABLE name` parses as SELECT * FROM name with a star at location -1.
  bool is_table_command(int32_t select) const {
    const int32_t targets = t_.member(select, "targetList");
    if (targets < 0 || t_.member(select, "fromClause") < 0) return false;
    const int32_t first = t_.at(targets).first_child;
    if (first < 0 || t_.at(first).next_sibling >= 0) return false;
    const int32_t res = t_.member(first, "ResTarget");
    const int32_t val = t_.member(res, "val");
    const int32_t col = t_.member(val, "ColumnRef");
    const int32_t loc = t_.member(col, "location");
    return col >= 0 && loc >= 0 && t_.at(loc).number == -1;
  }

  // A SELECT with a WHERE: the restrictions its WHERE puts on the columns of
  // each relation its FROM list names outside subqueries (joins included),
  // for record_relation (ColumnRestriction). A column qualified by the name
  // the relation goes by, if no other FROM item goes by it; a bare column
  // too when the relation is the only FROM item (in a join a bare name may
  // be another item's column, or a USING column merged from both sides).
  void note_restrictions(int32_t select) {
    const int32_t from = t_.member(select, "fromClause");
    const int32_t where = t_.member(select, "whereClause");
    if (from < 0 || where < 0 || t_.at(from).kind != Kind::kArray) return;
    std::vector<std::pair<int32_t, std::string_view>> vars;  // RangeVar body, its name
    std::vector<std::string_view> names;
    const int32_t first = t_.at(from).first_child;
    for (int32_t item = first; item >= 0; item = t_.at(item).next_sibling)
      from_item_names(item, vars, names);
    const bool single =
        first >= 0 && t_.at(first).next_sibling < 0 &&
        (node_of(first).first == "RangeVar" || node_of(first).first == "RangeSubselect");
    for (const auto& [var, name] : vars) {
      if (std::count(names.begin(), names.end(), name) != 1) continue;
      std::vector<ColumnRestriction> found;
      collect_restrictions(where, {name, single}, found);
      const bool cte = t_.at(var).key == "RangeVar" && cte_named(var) != kNotCte;
      if (t_.at(var).key == "RangeVar" && !cte) {
        if (!found.empty()) restrictions_.emplace_back(var, std::move(found));
        continue;
      }
      // A subquery or a CTE that only passes a table's rows on: its column's
      // restriction is the table's column's.
      for (auto& r : found) {
        const auto [table, column] =
            cte ? through_cte(var, r.column, 0) : passed_on(var, r.column, 0);
        if (table < 0) continue;
        r.column = column;
        restrictions_.emplace_back(table, std::vector<ColumnRestriction>{std::move(r)});
      }
    }
  }

  // The table (RangeVar body) and its column that column `column` of the
  // subquery `subselect` (a RangeSubselect body) passes on unchanged, row for
  // row: a SELECT of plain columns (or only *) from one table, or from such
  // a subquery, with no grouping, aggregate, DISTINCT, window, LIMIT,
  // OFFSET, locking, WITH or set operation (its own WHERE may keep fewer
  // rows); {-1, ""} otherwise. A restriction on the subquery's column then
  // keeps the table's rows whose (masked) value satisfies it.
  std::pair<int32_t, std::string> passed_on(int32_t subselect, const std::string& column,
                                            int depth) const {
    return passed_on_by(t_.member(t_.member(subselect, "subquery"), "SelectStmt"), column, depth);
  }

  // Statement::passed_on of the statement's SELECT: each plain output
  // column that passed_on_by follows to a relation's column.
  void note_passed_on(int32_t select) {
    const int32_t targets = t_.member(select, "targetList");
    if (targets < 0) return;
    for (int32_t t = t_.at(targets).first_child; t >= 0; t = t_.at(t).next_sibling) {
      const int32_t target = t_.member(t, "ResTarget");
      const int32_t fields = t_.member(t_.member(t_.member(target, "val"), "ColumnRef"), "fields");
      if (fields < 0) continue;
      int32_t last = t_.at(fields).first_child;
      while (last >= 0 && t_.at(last).next_sibling >= 0) last = t_.at(last).next_sibling;
      const int32_t part = t_.member(last, "String");
      if (part < 0) continue;
      const std::string output(t_.member(target, "name") >= 0 ? string_member(target, "name")
                                                              : string_member(part, "sval"));
      const auto [table, column] = passed_on_by(select, output, 0);
      for (const auto& [index, body] : relation_bodies_)
        if (table >= 0 && body == table) out_.passed_on.push_back({output, index, column});
    }
  }

  // The same for a reference to a CTE (a RangeVar body cte_named finds):
  // through the CTE's SELECT when the statement refers to the CTE's name in
  // this one place only, so that the rows it keeps go nowhere else.
  std::pair<int32_t, std::string> through_cte(int32_t var, const std::string& column,
                                              int depth) const {
    const int32_t cte = cte_named(var);
    if (cte < 0 || relation_uses(string_member(var, "relname")) != 1) return {-1, {}};
    if (t_.member(cte, "aliascolnames") >= 0 || t_.member(cte, "search_clause") >= 0 ||
        t_.member(cte, "cycle_clause") >= 0)
      return {-1, {}};
    return passed_on_by(t_.member(t_.member(cte, "ctequery"), "SelectStmt"), column, depth);
  }

  static constexpr int32_t kNotCte = -1;
  static constexpr int32_t kUnclearCte = -2;

  // The CTE (CommonTableExpr body) a RangeVar without a schema names:
  // kNotCte when no CTE of the statement has its name (a relation), the CTE
  // when exactly one of a WITH without RECURSIVE does, kUnclearCte
  // otherwise. The name alone, whatever the scope: a reference outside the
  // CTE's scope (a relation of that name) leaves the CTE unreferenced, so
  // through_cte's filter keeps rows nothing reads.
  int32_t cte_named(int32_t var) const {
    if (!ctes_listed_) {
      // Most statements have no WITH: one pass over the keys tells.
      ctes_listed_ = true;
      for (int32_t i = 0; i < t_.size(); ++i)
        if (t_.at(i).key == "withClause") list_ctes(i);
    }
    if (cte_names_.empty() || t_.member(var, "schemaname") >= 0 ||
        t_.member(var, "catalogname") >= 0)
      return kNotCte;
    const auto it = cte_names_.find(string_member(var, "relname"));
    if (it == cte_names_.end()) return kNotCte;
    return it->second;
  }

  void list_ctes(int32_t with) const {
    const int32_t list = t_.member(with, "ctes");
    if (list < 0) return;
    for (int32_t c = t_.at(list).first_child; c >= 0; c = t_.at(c).next_sibling) {
      const int32_t body = t_.at(c).first_child;
      if (body < 0) continue;
      const auto [it, fresh] = cte_names_.emplace(string_member(body, "ctename"), body);
      if (!fresh || bool_member(with, "recursive")) it->second = kUnclearCte;
    }
  }

  // How often the statement names `name` as a relation without a schema.
  int relation_uses(std::string_view name) const {
    if (!relations_counted_) {
      relations_counted_ = true;
      for (int32_t i = 0; i < t_.size(); ++i) {
        if (t_.at(i).kind != Kind::kObject) continue;
        if (t_.member(i, "relname") >= 0 && t_.member(i, "schemaname") < 0 &&
            t_.member(i, "catalogname") < 0)
          ++relation_uses_[string_member(i, "relname")];
      }
    }
    const auto it = relation_uses_.find(name);
    return it == relation_uses_.end() ? 0 : it->second;
  }

  // passed_on for a SELECT (a SelectStmt body).
  std::pair<int32_t, std::string> passed_on_by(int32_t select, const std::string& column,
                                               int depth) const {
    const std::pair<int32_t, std::string> none{-1, {}};
    if (select < 0 || depth > 16) return none;
    for (const char* key : {"groupClause", "havingClause", "windowClause", "distinctClause",
                            "limitCount", "limitOffset", "lockingClause", "withClause",
                            "valuesLists", "intoClause", "larg", "rarg"})
      if (t_.member(select, key) >= 0) return none;
    const std::string_view op = string_member(select, "op");
    const int32_t from = t_.member(select, "fromClause");
    const int32_t targets = t_.member(select, "targetList");
    if (!(op.empty() || op == "SETOP_NONE") || from < 0 || targets < 0) return none;
    const int32_t item = t_.at(from).first_child;
    if (item < 0 || t_.at(item).next_sibling >= 0) return none;
    const auto [kind, body] = node_of(item);
    if (kind != "RangeVar" && kind != "RangeSubselect") return none;
    const int32_t alias = t_.member(body, "alias");
    if (t_.member(alias, "colnames") >= 0 || t_.member(body, "lateral") >= 0) return none;
    const std::string_view name =
        alias >= 0 ? string_member(alias, "aliasname") : string_member(body, "relname");
    // The target list: plain columns of the item, *, and computed columns
    // named by an alias (`age / 10 AS decade`: an expression keeps the
    // rows; without an alias its name is PostgreSQL's guess, which may be a
    // column's) with no window function (computed over rows the filter
    // would take out). An aggregate beside a plain column is PostgreSQL's
    // error, with or without the filter.
    std::string source;
    bool star = false, named_twice = false;
    for (int32_t t = t_.at(targets).first_child; t >= 0; t = t_.at(t).next_sibling) {
      const int32_t target = t_.member(t, "ResTarget");
      const int32_t val = t_.member(target, "val");
      const int32_t fields = t_.member(t_.member(val, "ColumnRef"), "fields");
      if (fields < 0) {
        if (t_.member(target, "name") < 0 || has_key(val, "over")) return none;
        named_twice = named_twice || string_member(target, "name") == column;
        continue;
      }
      std::vector<std::string_view> parts;
      bool has_star = false;
      for (int32_t f = t_.at(fields).first_child; f >= 0; f = t_.at(f).next_sibling) {
        const int32_t s = t_.member(f, "String");
        if (s >= 0)
          parts.push_back(string_member(s, "sval"));
        else if (t_.member(f, "A_Star") >= 0 && t_.at(f).next_sibling < 0)
          has_star = true;
        else
          return none;
      }
      if (parts.size() > (has_star ? 1u : 2u) ||
          (parts.size() == (has_star ? 1u : 2u) && parts[0] != name))
        return none;
      if (has_star) {
        star = true;
        continue;
      }
      if (parts.empty()) return none;
      const std::string_view output =
          t_.member(target, "name") >= 0 ? string_member(target, "name") : parts.back();
      if (output != column) continue;
      named_twice = named_twice || !source.empty();
      source = std::string(parts.back());
    }
    // A name given twice (or by * and a target) is ambiguous, or computed.
    if (named_twice || (star && !source.empty())) return none;
    if (star) source = column;
    if (source.empty()) return none;
    if (kind == "RangeVar") {
      const int32_t cte = cte_named(body);
      if (cte == kNotCte) return {body, source};
      return through_cte(body, source, depth + 1);
    }
    return passed_on(body, source, depth + 1);
  }

  // The relations (RangeVar bodies) FROM item `item` holds outside
  // subqueries and functions, each with the name it goes by, unless an alias
  // renames its columns (`AS t(a, b)`) or a join alias hides it; and every
  // name the item's parts go by.
  void from_item_names(int32_t item, std::vector<std::pair<int32_t, std::string_view>>& vars,
                       std::vector<std::string_view>& names) const {
    const auto [kind, body] = node_of(item);
    if (body < 0) return;
    const int32_t alias = t_.member(body, "alias");
    if (kind == "RangeVar") {
      const std::string_view name =
          alias >= 0 ? string_member(alias, "aliasname") : string_member(body, "relname");
      names.push_back(name);
      if (t_.member(alias, "colnames") < 0) vars.emplace_back(body, name);
      return;
    }
    if (alias >= 0) names.push_back(string_member(alias, "aliasname"));
    // A subquery, by its alias (passed_on follows it to its table).
    if (kind == "RangeSubselect" && alias >= 0 && t_.member(alias, "colnames") < 0 &&
        t_.member(body, "lateral") < 0)
      vars.emplace_back(body, string_member(alias, "aliasname"));
    if (kind != "JoinExpr") return;
    const int32_t using_alias = t_.member(body, "join_using_alias");
    if (using_alias >= 0) names.push_back(string_member(using_alias, "aliasname"));
    if (alias >= 0) {
      // Its relations are known by the join's alias only: count their names
      // so that nothing else is taken for them.
      std::vector<std::pair<int32_t, std::string_view>> hidden;
      from_item_names(t_.member(body, "larg"), hidden, names);
      from_item_names(t_.member(body, "rarg"), hidden, names);
      return;
    }
    from_item_names(t_.member(body, "larg"), vars, names);
    from_item_names(t_.member(body, "rarg"), vars, names);
  }

  // The FROM item a restriction's column must belong to: the name it goes
  // by, and whether a bare column name is its (it is the only item).
  struct RestrictedItem {
    std::string_view name;
    bool bare = false;
  };

  // The conjuncts of `node` (nested ANDs included) that are restrictions.
  void collect_restrictions(int32_t node, const RestrictedItem& item,
                            std::vector<ColumnRestriction>& out) const {
    const auto [kind, body] = node_of(node);
    if (kind == "BoolExpr") {
      if (string_member(body, "boolop") != "AND_EXPR") return;
      const int32_t args = t_.member(body, "args");
      if (args < 0) return;
      for (int32_t a = t_.at(args).first_child; a >= 0; a = t_.at(a).next_sibling)
        collect_restrictions(a, item, out);
      return;
    }
    if (kind != "A_Expr") return;
    const std::string_view form = string_member(body, "kind");
    const std::string op = restriction_operator(t_.member(body, "name"), form == "AEXPR_LIKE");
    const int32_t lexpr = t_.member(body, "lexpr");
    const int32_t rexpr = t_.member(body, "rexpr");
    ColumnRestriction r;
    if (form == "AEXPR_OP" && !op.empty() && op != "BETWEEN") {
      ColumnRestriction::Comparison c{op, true, false, {}};
      if (restricted_column(lexpr, item, r.column) && read_constant(rexpr, c)) {
        r.comparisons.push_back(std::move(c));
      } else if (restricted_column(rexpr, item, r.column) && read_constant(lexpr, c)) {
        c.column_first = false;
        r.comparisons.push_back(std::move(c));
      }
    } else if ((form == "AEXPR_IN" && (op == "=" || op == "<>")) ||
               (form == "AEXPR_BETWEEN" && op == "BETWEEN")) {
      const int32_t items = t_.member(t_.member(rexpr, "List"), "items");
      if (!restricted_column(lexpr, item, r.column) || items < 0) return;
      for (int32_t i = t_.at(items).first_child; i >= 0; i = t_.at(i).next_sibling) {
        const bool between = form == "AEXPR_BETWEEN";
        ColumnRestriction::Comparison c{
            between ? (r.comparisons.empty() ? ">=" : "<=") : op, true, false, {}};
        if (!read_constant(i, c) || r.comparisons.size() >= 1000) return;
        r.comparisons.push_back(std::move(c));
      }
      if (form == "AEXPR_BETWEEN" && r.comparisons.size() != 2) return;
      r.any = op == "=";
    } else if ((form == "AEXPR_OP_ANY" && op == "=") || (form == "AEXPR_OP_ALL" && op == "<>")) {
      // IN and NOT IN as drivers write them for a list.
      if (!restricted_column(lexpr, item, r.column)) return;
      const auto [array_kind, array] = node_of(rexpr);
      if (array_kind == "ParamRef") {
        ColumnRestriction::Comparison c{op, true, false, {}};
        // (PREPARE's list names no array type kanon reads: prepared_type.)
        if (!read_constant(rexpr, c)) return;
        c.array = true;
        r.comparisons.push_back(std::move(c));
      } else if (array_kind == "A_ArrayExpr") {
        // Constants only: ARRAY[$1] would be typed by kanon's filter, where
        // alone PostgreSQL types it text.
        const int32_t items = t_.member(array, "elements");
        if (items < 0) return;
        for (int32_t i = t_.at(items).first_child; i >= 0; i = t_.at(i).next_sibling) {
          ColumnRestriction::Comparison c{op, true, false, {}};
          if (node_of(i).first != "A_Const" || !read_constant(i, c) || r.comparisons.size() >= 1000)
            return;
          r.comparisons.push_back(std::move(c));
        }
        r.any = op == "=";
      }
    } else if (form == "AEXPR_LIKE") {
      // `col LIKE 'pattern'` and NOT LIKE: the column on the left only (a
      // raw value as the pattern could make textlike fail on it: a trailing
      // backslash is an error once the text before it matched), a constant
      // pattern only (a parameter's could end with a backslash), bounded
      // (textlike recurses once per '%' it passes).
      ColumnRestriction::Comparison c{op, true, false, {}};
      if (restricted_column(lexpr, item, r.column) && node_of(rexpr).first == "A_Const" &&
          read_constant(rexpr, c) && c.string && c.value.size() <= kMaxLikePattern)
        r.comparisons.push_back(std::move(c));
    }
    if (!r.comparisons.empty()) out.push_back(std::move(r));
  }

  // An A_Expr's operator name when it is one a restriction may use ("=",
  // "<>", "<", "<=", ">", ">=", "BETWEEN"; with `like`, LIKE's "~~" and NOT
  // LIKE's "!~~"), unqualified or in pg_catalog; "" otherwise.
  std::string restriction_operator(int32_t name, bool like) const {
    if (name < 0 || t_.at(name).kind != Kind::kArray) return {};
    std::vector<std::string_view> parts;
    for (int32_t p = t_.at(name).first_child; p >= 0; p = t_.at(p).next_sibling)
      parts.push_back(string_member(t_.member(p, "String"), "sval"));
    if (parts.empty() || parts.size() > 2 || (parts.size() == 2 && parts[0] != "pg_catalog"))
      return {};
    if (like) return parts.back() == "~~" || parts.back() == "!~~" ? std::string(parts.back()) : "";
    for (const char* op : {"=", "<>", "<", "<=", ">", ">=", "BETWEEN"})
      if (parts.back() == op) return op;
    return {};
  }

  // A ColumnRef naming a column of the FROM item `item`.
  bool restricted_column(int32_t node, const RestrictedItem& item, std::string& column) const {
    const auto [kind, body] = node_of(node);
    const int32_t fields = kind == "ColumnRef" ? t_.member(body, "fields") : -1;
    if (fields < 0) return false;
    std::vector<std::string_view> parts;
    for (int32_t f = t_.at(fields).first_child; f >= 0; f = t_.at(f).next_sibling) {
      const int32_t s = t_.member(f, "String");
      if (s < 0) return false;  // a star
      parts.push_back(string_member(s, "sval"));
    }
    if (parts.empty() || parts.size() > 2) return false;
    if (parts.size() == 1 ? !item.bare : parts[0] != item.name) return false;
    column = std::string(parts.back());
    return !column.empty();
  }

  // A positive integer constant (libpg_query's JSON writes 0 and negative
  // ones alike, so they are left out), a string of printable ASCII without
  // a backslash, or a parameter used nowhere else in the text (not PREPARE's).
  bool read_constant(int32_t node, ColumnRestriction::Comparison& c) const {
    const auto [kind, body] = node_of(node);
    if (kind == "ParamRef") {
      const int32_t number = t_.member(body, "number");
      if (number < 0 || t_.at(number).kind != Kind::kNumber || t_.at(number).number <= 0 ||
          t_.at(number).number > 65535 || parameter_uses(t_.at(number).number) != 1)
        return false;
      c.parameter = static_cast<int>(t_.at(number).number);
      // PREPARE's statement has parameters of its own, typed by its list.
      if (out_.node != "PrepareStmt") return true;
      c.prepared = true;
      return prepared_type(c.parameter, c.declared);
    }
    if (kind != "A_Const") return false;
    const int32_t ival = t_.member(t_.member(body, "ival"), "ival");
    if (ival >= 0) {
      if (t_.at(ival).kind != Kind::kNumber || t_.at(ival).number <= 0) return false;
      c.string = false;
      c.value = std::to_string(t_.at(ival).number);
      return true;
    }
    const int32_t sval = t_.member(t_.member(body, "sval"), "sval");
    if (sval < 0 || t_.at(sval).kind != Kind::kString) return false;
    const std::string_view text = t_.at(sval).text;
    for (char ch : text)
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f ||
          ch == '\\')
        return false;
    c.string = true;
    c.value = std::string(text);
    return true;
  }

  // The type PREPARE's list declares for $n (0 past its end: PostgreSQL
  // infers it), when the list names it as the grammar writes integer,
  // smallint, bigint and character varying: pg_catalog's, qualified, so
  // neither search_path nor a temporary table's row type can stand in for
  // it (`text` and `int4` are written unqualified: not read).
  bool prepared_type(int n, uint32_t& oid) const {
    const int32_t types = t_.member(top_body_, "argtypes");
    int32_t type = types >= 0 ? t_.at(types).first_child : -1;
    for (int i = 1; i < n && type >= 0; ++i) type = t_.at(type).next_sibling;
    oid = 0;
    if (type < 0) return true;
    const int32_t name = t_.member(type, "TypeName");
    for (const char* key : {"typmods", "arrayBounds", "setof", "pct_type"})
      if (t_.member(name, key) >= 0) return false;
    const int32_t names = t_.member(name, "names");
    std::vector<std::string_view> parts;
    for (int32_t p = names >= 0 ? t_.at(names).first_child : -1; p >= 0; p = t_.at(p).next_sibling)
      parts.push_back(string_member(t_.member(p, "String"), "sval"));
    if (parts.size() != 2 || parts[0] != "pg_catalog") return false;
    static constexpr std::pair<std::string_view, uint32_t> kTypes[] = {
        {"int2", 21}, {"int4", 23}, {"int8", 20}, {"varchar", 1043}};
    for (const auto& [type_name, type_oid] : kTypes)
      if (parts[1] == type_name) oid = type_oid;
    return oid != 0;
  }

  // How often the text refers to parameter $n (counted once per text).
  int parameter_uses(int64_t n) const {
    if (!parameters_counted_) {
      parameters_counted_ = true;
      for (int32_t i = 0; i < t_.size(); ++i) {
        if (t_.at(i).key != "ParamRef") continue;
        const int32_t number = t_.member(i, "number");
        if (number >= 0 && t_.at(number).kind == Kind::kNumber)
          ++parameter_uses_[t_.at(number).number];
      }
    }
    const auto it = parameter_uses_.find(n);
    return it == parameter_uses_.end() ? 0 : it->second;
  }

  void record_relation(int32_t body, std::string_view parent_type, std::string_view key) {
    RelationRef r;
    relation_bodies_.emplace_back(out_.relations.size(), body);
    r.catalog = std::string(string_member(body, "catalogname"));
    r.schema = std::string(string_member(body, "schemaname"));
    r.name = std::string(string_member(body, "relname"));
    const int32_t loc = t_.member(body, "location");
    r.location = loc >= 0 ? static_cast<int>(t_.at(loc).number) : -1;
    r.inh = bool_member(body, "inh");
    r.has_alias = t_.member(body, "alias") >= 0;
    if (r.schema.empty() && r.catalog.empty())
      for (const auto& c : ctes_)
        if (c == r.name) r.cte = true;
    if (in_locking_)
      r.role = RelationRef::Role::kLockTarget;
    else if (parent_type == "RangeTableSample")
      r.role = RelationRef::Role::kSampled;
    else if (parent_type == "CopyStmt" && key == "relation")
      r.role = RelationRef::Role::kCopySource;
    else if (key == "fromClause" || ((key == "larg" || key == "rarg") && parent_type == "JoinExpr"))
      r.role = RelationRef::Role::kRead;
    r.table_form = table_form_from_ && key == "fromClause";
    out_.relations.push_back(std::move(r));
  }

  // An Alias (of a FROM item or a join): its name, and whether it renames
  // columns by position.
  void record_alias(int32_t alias) {
    out_.alias_names.emplace_back(string_member(alias, "aliasname"));
    if (t_.member(alias, "colnames") >= 0) out_.alias_columns = true;
  }

  void record_column(int32_t body) {
    ColumnReference c;
    const int32_t loc = t_.member(body, "location");
    c.location = loc >= 0 ? static_cast<int>(t_.at(loc).number) : -1;
    const int32_t fields = t_.member(body, "fields");
    if (fields >= 0) {
      for (int32_t f = t_.at(fields).first_child; f >= 0; f = t_.at(f).next_sibling) {
        const int32_t s = t_.member(f, "String");
        if (s >= 0)
          c.fields.emplace_back(string_member(s, "sval"));
        else
          c.star = true;
      }
    }
    out_.columns.push_back(std::move(c));
  }

  void record_function(int32_t body) {
    FunctionReference f;
    const int32_t loc = t_.member(body, "location");
    f.location = loc >= 0 ? static_cast<int>(t_.at(loc).number) : -1;
    const int32_t names = t_.member(body, "funcname");
    std::vector<std::string_view> parts;
    if (names >= 0)
      for (int32_t n = t_.at(names).first_child; n >= 0; n = t_.at(n).next_sibling)
        parts.push_back(string_member(t_.member(n, "String"), "sval"));
    if (!parts.empty()) f.name = std::string(parts.back());
    if (parts.size() >= 2) f.schema = std::string(parts[parts.size() - 2]);
    out_.functions.push_back(std::move(f));
  }

  const JsonTree& t_;
  Statement& out_;
  const bool passed_on_;
  uint64_t hash_ = kFnvOffset;
  int depth_ = -1;  // the statement node itself is depth 0
  int32_t top_body_ = -1;
  bool in_locking_ = false;
  // note_restrictions: a RangeVar's body, and what its SELECT's WHERE
  // restricts its columns to.
  std::vector<std::pair<int32_t, std::vector<ColumnRestriction>>> restrictions_;
  std::vector<std::pair<size_t, int32_t>> relation_bodies_;  // out_.relations' index, its body
  mutable bool parameters_counted_ = false;
  mutable std::map<int64_t, int> parameter_uses_;  // parameter_uses: $n's number, its references
  mutable bool ctes_listed_ = false;
  mutable bool relations_counted_ = false;
  mutable std::map<std::string_view, int> relation_uses_;  // relation_uses
  mutable std::map<std::string_view, int32_t> cte_names_;  // cte_named
  bool table_form_from_ = false;
  std::vector<std::string_view> ctes_;
};

}  // namespace

ParseOutcome parse_sql(std::string_view sql, bool passed_on) {
  const std::string text(sql);  // libpg_query wants a NUL-terminated string
  PgQueryParseResult result = pg_query_parse(text.c_str());
  ParseOutcome out;
  if (result.error != nullptr) {
    out.error = result.error->message;
    out.error_offset = result.error->cursorpos;
    pg_query_free_parse_result(result);
    return out;
  }
  // One tree per thread, reused: its buffers stay allocated between calls
  // (large statements would otherwise map and unmap fresh pages each time).
  thread_local JsonTree tree;
  const std::string_view doc = result.parse_tree;
  if (!tree.parse(doc)) {
    out.error = "kanon could not read libpg_query's parse tree";
    pg_query_free_parse_result(result);
    tree.release_if_larger_than(1 << 16);
    return out;
  }
  const int32_t stmts = tree.member(tree.root(), "stmts");
  if (stmts >= 0) {
    for (int32_t s = tree.at(stmts).first_child; s >= 0; s = tree.at(s).next_sibling) {
      Statement st;
      const int32_t loc = tree.member(s, "stmt_location");
      const int32_t len = tree.member(s, "stmt_len");
      st.location = loc >= 0 ? static_cast<int>(tree.at(loc).number) : 0;
      st.length = len >= 0 && tree.at(len).number > 0 ? static_cast<int>(tree.at(len).number)
                                                      : static_cast<int>(sql.size()) - st.location;
      const int32_t stmt = tree.member(s, "stmt");
      if (stmt >= 0) StatementWalker(tree, st, passed_on).walk_top(stmt);
      out.statements.push_back(std::move(st));
    }
  }
  out.ok = true;
  out.statement_count = static_cast<int>(out.statements.size());
  pg_query_free_parse_result(result);
  tree.release_if_larger_than(1 << 16);  // keep up to 4 MB per thread
  return out;
}

bool literals_read_alike(std::string_view sql) {
  const ScannedTokens scan(sql);
  if (!scan.ok()) return false;
  for (size_t i = 0; i < scan.size(); ++i) {
    const ScannedToken& token = scan.at(i);
    if (token.token != PG_QUERY__TOKEN__SCONST) continue;
    const size_t start = static_cast<size_t>(token.start);
    if (start >= sql.size() || sql[start] != '\'')
      continue;  // E'' and $$ constants (N'' starts at its quote: checked)
    // Up to the next token: a constant continued over lines is one token,
    // and its end is not reported. Trailing comments count too (denies more,
    // never less).
    const size_t end = scan.next_start(i);
    if (sql.substr(start, end - start).find('\\') != std::string_view::npos) return false;
  }
  return true;
}

namespace {

SqlToken::Kind token_kind(int32_t token) {
  using K = SqlToken::Kind;
  switch (token) {
    case PG_QUERY__TOKEN__ASCII_40:
      return K::kOpen;
    case PG_QUERY__TOKEN__ASCII_41:
      return K::kClose;
    case PG_QUERY__TOKEN__ASCII_44:
      return K::kComma;
    case PG_QUERY__TOKEN__ASCII_59:
      return K::kSemicolon;
    case PG_QUERY__TOKEN__AS:
      return K::kAs;
    case PG_QUERY__TOKEN__CONFLICT:
      return K::kConflict;
    case PG_QUERY__TOKEN__DATA_P:
      return K::kData;
    case PG_QUERY__TOKEN__DISTINCT:
      return K::kDistinct;
    case PG_QUERY__TOKEN__FETCH:
      return K::kFetch;
    case PG_QUERY__TOKEN__FOR:
      return K::kFor;
    case PG_QUERY__TOKEN__FROM:
      return K::kFrom;
    case PG_QUERY__TOKEN__GROUP_P:
      return K::kGroup;
    case PG_QUERY__TOKEN__HAVING:
      return K::kHaving;
    case PG_QUERY__TOKEN__LIMIT:
      return K::kLimit;
    case PG_QUERY__TOKEN__NO:
      return K::kNo;
    case PG_QUERY__TOKEN__OFFSET:
      return K::kOffset;
    case PG_QUERY__TOKEN__ON:
      return K::kOn;
    case PG_QUERY__TOKEN__ORDER:
      return K::kOrder;
    case PG_QUERY__TOKEN__RETURNING:
      return K::kReturning;
    case PG_QUERY__TOKEN__SELECT:
      return K::kSelect;
    case PG_QUERY__TOKEN__USING:
      return K::kUsing;
    case PG_QUERY__TOKEN__VALUES:
      return K::kValues;
    case PG_QUERY__TOKEN__WHERE:
      return K::kWhere;
    case PG_QUERY__TOKEN__WINDOW:
      return K::kWindow;
    case PG_QUERY__TOKEN__WITH:
      return K::kWith;
    case PG_QUERY__TOKEN__ANALYZE:
    case PG_QUERY__TOKEN__ANALYSE:
      return K::kAnalyze;
    case PG_QUERY__TOKEN__VERBOSE:
      return K::kVerbose;
    default:
      return K::kOther;
  }
}

}  // namespace

namespace {

// PostgreSQL's white space between tokens (scan.l: space).
bool is_sql_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

bool scan_tokens(std::string_view sql, std::vector<SqlToken>& out) {
  out.clear();
  const ScannedTokens scan(sql);
  if (!scan.ok()) return false;
  out.reserve(scan.size());
  for (size_t i = 0; i < scan.size(); ++i) {
    const ScannedToken& t = scan.at(i);
    // Comments are tokens too: they are no part of the statement's syntax.
    if (t.token == PG_QUERY__TOKEN__SQL_COMMENT || t.token == PG_QUERY__TOKEN__C_COMMENT) continue;
    // A token ends where the next begins, less the white space between:
    // the scanner's own end is short for some (U&"..." ends after its U).
    const size_t start = static_cast<size_t>(t.start);
    size_t end = scan.next_start(i);
    while (end > start + 1 && is_sql_space(sql[end - 1])) --end;
    out.push_back({token_kind(t.token), start, end});
  }
  return true;
}

bool raw_parse_json(std::string_view sql) {
  const std::string text(sql);
  PgQueryParseResult result = pg_query_parse(text.c_str());
  const bool ok = result.error == nullptr;
  pg_query_free_parse_result(result);
  return ok;
}

bool raw_parse_protobuf(std::string_view sql) {
  const std::string text(sql);
  PgQueryProtobufParseResult result = pg_query_parse_protobuf(text.c_str());
  bool ok = result.error == nullptr;
  if (ok) {
    PgQuery__ParseResult* tree = pg_query__parse_result__unpack(
        nullptr, result.parse_tree.len, reinterpret_cast<const uint8_t*>(result.parse_tree.data));
    ok = tree != nullptr;
    if (tree) pg_query__parse_result__free_unpacked(tree, nullptr);
  }
  pg_query_free_protobuf_parse_result(result);
  return ok;
}

}  // namespace kanon::rewriter
