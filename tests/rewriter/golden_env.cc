#include "tests/rewriter/golden_env.h"

#include <algorithm>
#include <stdexcept>

namespace kanon::testing {

std::shared_ptr<policy::TableSnapshot> hand_snapshot(
    const std::string& schema, const std::string& table,
    const std::vector<std::pair<std::string, std::string>>& columns,
    const std::vector<std::string>& masks, const std::vector<std::string>& direct) {
  auto snap = std::make_shared<policy::TableSnapshot>();
  snap->policy.schema = schema;
  snap->policy.table = table;
  snap->info.schema = schema;
  snap->info.table = table;
  for (size_t i = 0; i < columns.size(); ++i) {
    snap->info.columns.push_back({columns[i].first, columns[i].second, columns[i].second});
    // Roles as build_masks gives them: `direct` are direct identifiers, a
    // column read as it is is released as it is, any other mask is a
    // quasi-identifier's.
    using Role = policy::ColumnMask::Role;
    const bool is_direct =
        std::find(direct.begin(), direct.end(), columns[i].first) != direct.end();
    const Role role = is_direct                                    ? Role::kDirectIdentifier
                      : masks[i] == "\"" + columns[i].first + "\"" ? Role::kOther
                                                                   : Role::kQuasiIdentifier;
    snap->masks.columns.push_back({columns[i].first, columns[i].second, masks[i], role});
  }
  return snap;
}

namespace {

std::shared_ptr<policy::TableSnapshot> people(const std::string& schema) {
  auto s =
      hand_snapshot(schema, "people",
                    {{"id", "integer"},
                     {"name", "text"},
                     {"ssn", "text"},
                     {"occupation", "text"},
                     {"city", "text"},
                     {"state", "text"},
                     {"diagnosis", "text"}},
                    {"\"id\"", "NULL::text", "'***'::text",
                     "CASE WHEN \"occupation\" IN ('Accountant', 'Farmer') THEN \"occupation\" END",
                     "CASE WHEN \"city\" = 'Hamlet' THEN \"city\" END",
                     "CASE WHEN \"state\" = 'OH' THEN \"state\" END",
                     schema == "public" ? "\"diagnosis\"" : "NULL::text"},
                    {"name", "ssn"});
  if (schema == "public") s->info.children = {"public.people_archive"};
  return s;
}

std::shared_ptr<policy::TableSnapshot> adult() {
  return hand_snapshot(
      "public", "adult",
      {{"id", "integer"},
       {"sex", "text"},
       {"age", "integer"},
       {"race", "text"},
       {"marital-status", "text"},
       {"education", "text"},
       {"native-country", "text"},
       {"workclass", "text"},
       {"occupation", "text"},
       {"salary-class", "text"}},
      {"\"id\"", "\"sex\"", "CASE WHEN \"age\" > 30 THEN \"age\" END", "NULL::text", "NULL::text",
       "\"education\"", "NULL::text", "\"workclass\"", "NULL::text", "\"salary-class\""});
}

// A partitioned protected table (partitions visits_east, visits_west).
std::shared_ptr<policy::TableSnapshot> visits() {
  auto s =
      hand_snapshot("public", "visits",
                    {{"id", "integer"}, {"city", "text"}, {"state", "text"}, {"region", "text"}},
                    {"\"id\"", "CASE WHEN \"city\" = 'Hamlet' THEN \"city\" END",
                     "CASE WHEN \"state\" = 'OH' THEN \"state\" END", "\"region\""});
  s->info.children = {"public.visits_east", "public.visits_west"};
  return s;
}

}  // namespace

GoldenEnv make_unit_env(const std::string& name) {
  GoldenEnv env;
  env.snapshot.version = 1;
  env.snapshot.tables["public.adult"] = adult();
  env.snapshot.tables["public.visits"] = visits();
  env.listed = {"public.people", "public.adult", "public.visits"};
  if (name == "default") {
    env.snapshot.tables["public.people"] = people("public");
  } else if (name == "materialized") {
    auto p = people("public");
    p->policy.mode = policy::EnforcementMode::kMaterialized;
    p->materialized_name = "\"kanon_masked\".\"people\"";
    env.snapshot.tables["public.people"] = p;
  } else if (name == "unbuilt") {
    env.snapshot.errors["public.people"] = "connection refused";
  } else if (name == "listed-only") {
    // Listed in the policy files, never attempted: only the listed set knows it.
  } else if (name == "two-schemas") {
    env.snapshot.tables["public.people"] = people("public");
    env.snapshot.tables["hr.people"] = people("hr");
    env.listed.push_back("hr.people");
  } else {
    throw std::runtime_error("unknown golden env '" + name + "'");
  }
  return env;
}

std::string env_macro(const GoldenEnv& env, const std::string& kind, const std::string& arg) {
  // "schema.table" or, for the columns a statement names, "schema.table: a, b".
  const size_t colon = arg.find(':');
  const std::string table = arg.substr(0, colon);
  const auto* t = env.snapshot.find(table);
  if (!t) throw std::runtime_error("macro names a table the env lacks: " + table);
  // @COPY: a read of the materialized copy, guarded against snapshots older
  // than it.
  if (kind != "MASKS")
    return "(SELECT * FROM " + t->materialized_name +
           " WHERE CASE WHEN EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid "
           "OPERATOR(pg_catalog.=) '" +
           t->materialized_name +
           "'::pg_catalog.regclass::pg_catalog.oid) THEN true ELSE pg_catalog.concat('kanon: this "
           "transaction''s snapshot is older than the masked copy of " +
           table +
           ", which a refresh replaced since: start a new transaction to read it; snapshot ', "
           "pg_catalog.pg_current_snapshot())::pg_catalog.bool END)";
  if (colon == std::string::npos) return t->masks.select_list();
  std::string out;
  std::string rest = arg.substr(colon + 1);
  for (size_t at = 0; at <= rest.size();) {
    size_t end = rest.find(',', at);
    if (end == std::string::npos) end = rest.size();
    std::string name = rest.substr(at, end - at);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    at = end + 1;
    if (name.empty()) continue;
    const auto it = std::find_if(t->masks.columns.begin(), t->masks.columns.end(),
                                 [&](const policy::ColumnMask& m) { return m.column == name; });
    if (it == t->masks.columns.end())
      throw std::runtime_error("macro names a column " + table + " lacks: " + name);
    out += (out.empty() ? "" : ", ") + it->select_item();
  }
  return out;
}

void add_release_test(GoldenEnv& env, const std::string& table, const std::string& column,
                      const std::string& test, policy::ColumnMask::Compared compared,
                      const std::string& expression) {
  auto copy = std::make_shared<policy::TableSnapshot>(*env.snapshot.tables.at(table));
  for (auto& m : copy->masks.columns)
    if (m.column == column) {
      m.release_test = test;
      m.compared = compared;
      if (!expression.empty()) m.expression = expression;
    }
  env.snapshot.tables[table] = copy;
}

}  // namespace kanon::testing
