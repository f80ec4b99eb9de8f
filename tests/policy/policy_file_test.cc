#include "policy/policy_file.h"

#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <fstream>

#include "catalog/table_catalog.h"
#include "store/policy_stores.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::policy;
using namespace kanon::store;
using namespace kanon::settings;
using kanon::testing::scratch_path;

namespace {

const std::string kPath = scratch_path("kanon-policy-file-test.yaml");

std::string write(const std::string& text, const std::string& path = kPath) {
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& yaml) {
  try {
    load_policy_file(write(yaml));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The dbname libpq takes from a connection string (the last one written).
std::string dbname_of(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  PQfreemem(error);
  std::string dbname;
  for (auto* o = options; o && o->keyword; ++o)
    if (std::string_view(o->keyword) == "dbname" && o->val) dbname = o->val;
  PQconninfoFree(options);
  return dbname;
}

const std::string kHead =
    "tables:\n  - table: public.people\n    k: 2\n"
    "    quasi_identifiers: [occupation, city, state]\n";

}  // namespace

TEST_CASE("risk: threshold and population table; 1/k without a threshold") {
  const auto ps = load_policy_file(
      write(kHead + "    risk:\n      threshold: 0.1\n      population: stats.census\n"));
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].risk.threshold == 0.1);
  CHECK(ps[0].risk_threshold() == 0.1);
  CHECK(ps[0].risk.has_population());
  CHECK(ps[0].risk.population() == "stats.census");
  const auto plain = load_policy_file(write(kHead));
  CHECK_FALSE(plain[0].risk.has_population());
  CHECK(plain[0].risk_threshold() == doctest::Approx(0.5));  // k = 2
}

TEST_CASE("a full policy entry loads") {
  const auto ps =
      load_policy_file(write(kHead + "    direct_identifiers: {name: null, ssn: \"***\"}\n"
                                     "    sensitive: {column: diagnosis, l: 3}\n"
                                     "    exempt: [postgres, auditor]\n"
                                     "    allowed_functions: [app.city_count]\n"
                                     "    refresh: 10m\n"
                                     "    max_nodes: 100\n"
                                     "    mode: materialized\n"
                                     "    evaluator: function\n"
                                     "    export:\n"
                                     "      hierarchies: {city: h/city.csv}\n"
                                     "      suppression: 0.05\n"
                                     "      metric: entropy\n"
                                     "      algorithm: mondrian\n"
                                     "      grant: [analyst, bi]\n"));
  REQUIRE(ps.size() == 1);
  const auto& p = ps[0];
  CHECK(p.schema == "public");
  CHECK(p.table == "people");
  CHECK(p.k == 2);
  CHECK(p.quasi_identifiers == std::vector<std::string>{"occupation", "city", "state"});
  CHECK(p.quasi_identifier_refs[1].line == 4);
  REQUIRE(p.direct_identifiers.size() == 2);
  CHECK(p.direct_identifiers[0].column == "name");
  CHECK(!p.direct_identifiers[0].constant);
  CHECK(p.direct_identifiers[1].constant == "***");
  CHECK(p.sensitive->column == "diagnosis");
  CHECK(p.sensitive->l == 3);
  CHECK(p.exempt == std::vector<std::string>{"postgres", "auditor"});
  CHECK(p.allowed_functions == std::vector<std::string>{"app.city_count"});
  CHECK(p.refresh == std::chrono::minutes(10));
  CHECK(p.max_nodes == 100);
  CHECK(p.mode == EnforcementMode::kMaterialized);
  CHECK(p.evaluator == MaskEvaluator::kFunction);
  CHECK(p.evaluator_where.line == 12);
  CHECK(p.export_options.hierarchies.at("city") == scratch_path("h/city.csv"));
  CHECK(p.export_options.suppression == 0.05);
  CHECK(p.export_options.metric == "entropy");
  CHECK(p.export_options.algorithm == "mondrian");
  CHECK(p.export_options.grant == std::vector<std::string>{"analyst", "bi"});
}

TEST_CASE("defaults") {
  const auto p = load_policy_file(write(kHead))[0];
  CHECK(p.mode == EnforcementMode::kInline);
  CHECK(p.evaluator == MaskEvaluator::kSql);
  CHECK(load_policy_file(write(kHead + "    evaluator: auto\n"))[0].evaluator ==
        MaskEvaluator::kAuto);
  CHECK(p.max_nodes == 4096);
  CHECK(!p.sensitive);
  CHECK(p.refresh == std::chrono::minutes(10));
}

TEST_CASE("every validation error names file, line and key") {
  const std::string f = kPath + ":";
  CHECK(error_of("tables: 3\n") == f + "1: tables: expected a list of tables");
  CHECK(error_of("tablez: []\n").find(f + "1: tablez: unknown key") == 0);
  CHECK(error_of("tables:\n  - k: 2\n    quasi_identifiers: [a]\n") ==
        f + "2: tables[0].table: required key is missing");
  CHECK(error_of("tables:\n  - table: people\n    k: 2\n    quasi_identifiers: [a]\n") ==
        f + "2: tables[0].table: 'people' is not a schema-qualified table name (schema.table)");
  CHECK(error_of("tables:\n  - table: a.b\n    k: 1\n    quasi_identifiers: [a]\n") ==
        f + "3: tables[0].k: must be at least 2 (and at most 2^30)");
  CHECK(error_of("tables:\n  - table: a.b\n    k: two\n    quasi_identifiers: [a]\n") ==
        f + "3: tables[0].k: expected an integer, got 'two'");
  CHECK(error_of("tables:\n  - table: a.b\n    k: 2\n    quasi_identifiers: a\n") ==
        f + "4: tables[0].quasi_identifiers: expected a list of column names");
  CHECK(error_of("tables:\n  - table: a.b\n    k: 2\n    quasi_identifiers: []\n") ==
        f + "4: tables[0].quasi_identifiers: empty list");
  CHECK(error_of("tables:\n  - table: a.b\n    k: 2\n    quasi_identifiers: [a, a]\n") ==
        f + "4: tables[0].quasi_identifiers[1]: column 'a' listed twice");
  CHECK(error_of(kHead + "    colour: red\n").find(f + "5: tables[0].colour: unknown key") == 0);
  CHECK(error_of(kHead + "    direct_identifiers: {city: null}\n") ==
        f + "5: tables[0].direct_identifiers.city: column 'city' already has another role in "
            "this table");
  CHECK(error_of(kHead + "    direct_identifiers: 5\n") ==
        f + "5: tables[0].direct_identifiers: expected a mapping of column to null or a "
            "constant, or a list of columns");
  CHECK(error_of(kHead + "    sensitive: {column: diagnosis, l: 1}\n") ==
        f + "5: tables[0].sensitive.l: must be between 2 and 1048576");
  CHECK(error_of(kHead + "    sensitive: {l: 2}\n") ==
        f + "5: tables[0].sensitive.column: required key is missing");
  CHECK(error_of(kHead + "    sensitive: {column: x, c: 2}\n")
            .find(f + "5: tables[0].sensitive.c: unknown key") == 0);
  CHECK(error_of(kHead + "    exempt: postgres\n") ==
        f + "5: tables[0].exempt: expected a list of users or roles");
  CHECK(error_of(kHead + "    allowed_functions: app.f\n") ==
        f + "5: tables[0].allowed_functions: expected a list of functions as schema.name");
  CHECK(error_of(kHead + "    allowed_functions: [f]\n") ==
        f + "5: tables[0].allowed_functions[0]: 'f' is not schema.name");
  CHECK(error_of(kHead + "    refresh: soon\n") ==
        f + "5: tables[0].refresh: 'soon' is not a positive duration (e.g. 30s, 10m, 1h)");
  CHECK(error_of(kHead + "    max_nodes: 0\n") ==
        f + "5: tables[0].max_nodes: must be between 1 and 16777216");
  CHECK(error_of(kHead + "    mode: lazy\n") ==
        f + "5: tables[0].mode: 'lazy' is not one of inline, materialized, view");
  CHECK(error_of(kHead + "    evaluator: c\n") ==
        f + "5: tables[0].evaluator: 'c' is not one of sql, function, auto");
  CHECK(error_of(kHead + "    export: {metric: fast}\n") ==
        f + "5: tables[0].export.metric: 'fast' is not one of loss, dm, entropy, precision, "
            "height, aecs");
  CHECK(error_of(kHead + "    export: {algorithm: genetic}\n") ==
        f + "5: tables[0].export.algorithm: 'genetic' is not one of flash, bfs, mondrian");
  CHECK(error_of(kHead + "    export: {grant: analyst}\n") ==
        f + "5: tables[0].export.grant: expected a list of users or roles");
  CHECK(error_of(kHead + "    export: {suppression: 2}\n") ==
        f + "5: tables[0].export.suppression: must be between 0 and 1");
  CHECK(error_of(kHead + "    risk: {threshold: 0}\n") ==
        f + "5: tables[0].risk.threshold: must be above 0 (the highest re-identification "
            "probability a record may have, e.g. 0.2 for classes of 5)");
  CHECK(error_of(kHead + "    risk: {threshold: 1.5}\n") ==
        f + "5: tables[0].risk.threshold: must be between 0 and 1");
  CHECK(error_of(kHead + "    risk: {population: census}\n") ==
        f + "5: tables[0].risk.population: 'census' is not a schema-qualified table name "
            "(schema.table)");
  CHECK(error_of(kHead + "    risk: {populace: public.census}\n")
            .find(f + "5: tables[0].risk.populace: unknown key") == 0);
  CHECK(error_of(kHead + "    export:\n      hierarchies: {zip: z.csv}\n") ==
        f + "6: tables[0].export.hierarchies.zip: 'zip' is not a quasi-identifier of this table");
  CHECK(error_of(kHead + kHead.substr(8)) ==
        f + "5: tables[1].table: table public.people already has a policy at line 2");
  CHECK(error_of("tables: [\n").find(f) == 0);
  CHECK_THROWS_WITH_AS(load_policy_file("/nonexistent/p.yaml"),
                       "/nonexistent/p.yaml: cannot open the policy file", ConfigError);
}

TEST_CASE("indexes: for materialized copies only, a list of distinct columns") {
  const auto p =
      load_policy_file(write(kHead + "    indexes: [state, id]\n    mode: materialized\n"))[0];
  CHECK(p.indexes == std::vector<std::string>{"state", "id"});
  REQUIRE(p.index_refs.size() == 2);
  CHECK(p.index_refs[1].line == 5);
  CHECK(p.index_refs[1].key == "tables[0].indexes[1]");
  CHECK(load_policy_file(write(kHead + "    mode: materialized\n"))[0].indexes.empty());
  const std::string f = kPath + ":";
  CHECK(error_of(kHead + "    indexes: [state]\n") ==
        f + "5: tables[0].indexes: indexes apply only to mode: materialized (the inline form "
            "and the view have no copy)");
  CHECK(error_of(kHead + "    mode: view\n    indexes: [state]\n") ==
        f + "6: tables[0].indexes: indexes apply only to mode: materialized (the inline form "
            "and the view have no copy)");
  CHECK(error_of(kHead + "    mode: materialized\n    indexes: state\n") ==
        f + "6: tables[0].indexes: expected a list of column names");
  CHECK(error_of(kHead + "    mode: materialized\n    indexes: [state, state]\n") ==
        f + "6: tables[0].indexes[1]: column 'state' listed twice");
  CHECK(error_of(kHead + "    mode: materialized\n    indexes: [[state]]\n") ==
        f + "6: tables[0].indexes[0]: expected a string");
}

TEST_CASE("person: one column or a list, never a quasi-identifier") {
  CHECK(load_policy_file(write(kHead + "    person: ssn\n"))[0].person ==
        std::vector<std::string>{"ssn"});
  const auto p = load_policy_file(write(kHead + "    person: [name, ssn]\n"))[0];
  CHECK(p.person == std::vector<std::string>{"name", "ssn"});
  REQUIRE(p.person_refs.size() == 2);
  CHECK(p.person_refs[1].key == "tables[0].person[1]");
  CHECK(load_policy_file(write(kHead))[0].person.empty());
  const std::string f = kPath + ":";
  CHECK(error_of(kHead + "    person: city\n") ==
        f + "5: tables[0].person: person column 'city' is a quasi-identifier; it names who a "
            "row belongs to");
  CHECK(error_of(kHead + "    person: [ssn, ssn]\n") ==
        f + "5: tables[0].person[1]: column 'ssn' listed twice");
}

TEST_CASE("wrong types and out-of-range values, each with file, line and key") {
  const std::string f = kPath + ":";
  CHECK(error_of("- table: a.b\n") ==
        f + "1: tables: a policy file is a mapping with a tables: list");
  CHECK(error_of("tables:\n  - table: a.b\n    k: 0\n    quasi_identifiers: [a]\n") ==
        f + "3: tables[0].k: must be at least 2 (and at most 2^30)");
  CHECK(error_of("tables:\n  - table: a.b\n    k: -2\n    quasi_identifiers: [a]\n") ==
        f + "3: tables[0].k: expected an integer, got '-2'");
  CHECK(error_of("tables:\n  - table: a.b\n    k: [2]\n    quasi_identifiers: [a]\n") ==
        f + "3: tables[0].k: expected an integer");
  CHECK(error_of("tables:\n  - table: [a, b]\n    k: 2\n    quasi_identifiers: [a]\n") ==
        f + "2: tables[0].table: expected a string");
  CHECK(error_of("tables:\n  - table: a.b\n    k: 2\n    quasi_identifiers: [a, '']\n") ==
        f + "4: tables[0].quasi_identifiers[1]: empty column name");
  CHECK(error_of("tables:\n  - table: a.b\n    quasi_identifiers: [a]\n") ==
        f + "2: tables[0].k: required key is missing");
  CHECK(error_of("tables:\n  - 5\n") == f + "2: tables[0]: expected a mapping");
  CHECK(error_of(kHead + "    sensitive: diagnosis\n") ==
        f + "5: tables[0].sensitive: expected a mapping");
  CHECK(error_of(kHead + "    sensitive: {column: diagnosis, l: many}\n") ==
        f + "5: tables[0].sensitive.l: expected an integer, got 'many'");
  CHECK(error_of(kHead + "    exempt: [[postgres]]\n") ==
        f + "5: tables[0].exempt[0]: expected a string");
  CHECK(error_of(kHead + "    max_nodes: lots\n") ==
        f + "5: tables[0].max_nodes: expected an integer, got 'lots'");
  CHECK(error_of(kHead + "    mode: [inline]\n") == f + "5: tables[0].mode: expected a string");
  CHECK(error_of(kHead + "    refresh: -5s\n") ==
        f + "5: tables[0].refresh: '-5s' is not a positive duration (e.g. 30s, 10m, 1h)");
  CHECK(error_of(kHead + "    export: {level: 3}\n")
            .find(f + "5: tables[0].export.level: "
                      "unknown key") == 0);
  CHECK(error_of(kHead + "    export: {hierarchies: [city]}\n") ==
        f + "5: tables[0].export.hierarchies: expected a mapping of column to file");
  CHECK(error_of(kHead + "    export: {suppression: half}\n") ==
        f + "5: tables[0].export.suppression: expected a number, got 'half'");
}

TEST_CASE("policies listed in the server config; duplicates across files") {
  const std::string a = write(kHead, scratch_path("kanon-policy-a.yaml"));
  const std::string b = write(kHead, scratch_path("kanon-policy-b.yaml"));
  const std::string config = scratch_path("kanon-policy-config.yaml");
  std::ofstream(config)
      << "backend: {host: db, port: 5433, user: kanon, password: \"s e\", dbname: demo}\n"
         "policies: [kanon-policy-a.yaml]\n";
  auto cfg = load_server_config(config);
  CHECK(cfg.policies == std::vector<std::string>{a});
  CHECK(service_conninfo(cfg) ==
        "host=db port=5433 user=kanon password='s e' dbname=demo application_name=kanon");
  CHECK(load_policies(cfg).size() == 1);
  cfg.policies.push_back(b);
  CHECK_THROWS_WITH_AS(
      load_policies(cfg),
      (b + ":2: tables[0].table: table public.people already has a policy in " + a + ":2").c_str(),
      ConfigError);
}

TEST_CASE("columns are checked against the catalog") {
  const auto p = load_policy_file(write(kHead + "    direct_identifiers: [nam]\n"))[0];
  TableInfo info{"public",
                 "people",
                 {{"occupation", "text", "text"},
                  {"city", "text", "text"},
                  {"state", "text", "text"},
                  {"name", "text", "text"}}};
  CHECK_THROWS_WITH_AS(check_against_catalog(p, info),
                       (kPath + ":5: tables[0].direct_identifiers.nam: column 'nam' does not "
                                "exist in public.people")
                           .c_str(),
                       ConfigError);
  const auto s = load_policy_file(write(kHead + "    sensitive: {column: diagnosis}\n"))[0];
  CHECK_THROWS_WITH_AS(check_against_catalog(s, info),
                       (kPath + ":5: tables[0].sensitive.column: column 'diagnosis' does not "
                                "exist in public.people")
                           .c_str(),
                       ConfigError);
  info.columns.erase(info.columns.begin() + 1);
  CHECK_THROWS_WITH_AS(check_against_catalog(p, info),
                       (kPath + ":4: tables[0].quasi_identifiers[1]: column 'city' does not "
                                "exist in public.people")
                           .c_str(),
                       ConfigError);
}

TEST_CASE("table names") {
  CHECK(split_table_name("public.people") ==
        std::make_pair(std::string("public"), std::string("people")));
  CHECK(split_table_name("\"My.Schema\".\"t\"\"x\"") ==
        std::make_pair(std::string("My.Schema"), std::string("t\"x")));
  CHECK(!split_table_name("a.b.c"));
  CHECK(!split_table_name(".b"));
  CHECK(!split_table_name("a."));
}

TEST_CASE("mode: view, grants: manage and grant_to") {
  const auto plain = load_policy_file(write(kHead + "    mode: view\n"))[0];
  CHECK(plain.mode == EnforcementMode::kView);
  CHECK(std::string(to_string(plain.mode)) == "view");
  CHECK(plain.grants == GrantPolicy::kNone);
  CHECK(plain.grant_to.empty());

  const auto p = load_policy_file(write(
      kHead + "    mode: view\n    grants: manage\n    grant_to: [analyst, \"BI team\"]\n"))[0];
  CHECK(p.grants == GrantPolicy::kManage);
  CHECK(std::string(to_string(p.grants)) == "manage");
  CHECK(p.grant_to == std::vector<std::string>{"analyst", "BI team"});
  CHECK(p.grants_where.line == 6);
  CHECK(p.grants_where.key == "tables[0].grants");
  CHECK(load_policy_file(write(kHead + "    mode: view\n    grants: none\n"))[0].grants ==
        GrantPolicy::kNone);

  const std::string f = kPath + ":";
  CHECK(error_of(kHead + "    mode: view\n    grants: all\n") ==
        f + "6: tables[0].grants: 'all' is not one of none, manage");
  CHECK(error_of(kHead + "    mode: view\n    grants: [manage]\n") ==
        f + "6: tables[0].grants: expected a string");
  CHECK(error_of(kHead + "    grants: manage\n    grant_to: [analyst]\n") ==
        f + "5: tables[0].grants: grants: manage applies only to mode: view (kanon grants on its "
            "masked view)");
  CHECK(error_of(kHead + "    mode: materialized\n    grants: manage\n    grant_to: [a]\n") ==
        f + "6: tables[0].grants: grants: manage applies only to mode: view (kanon grants on its "
            "masked view)");
  CHECK(error_of(kHead + "    mode: view\n    grants: manage\n") ==
        f + "6: tables[0].grants: grants: manage needs grant_to, the list of restricted roles to "
            "manage");
  CHECK(error_of(kHead + "    mode: view\n    grant_to: [analyst]\n") ==
        f + "6: tables[0].grant_to: grant_to needs grants: manage (and mode: view)");
  CHECK(error_of(kHead + "    mode: view\n    grants: manage\n    grant_to: []\n") ==
        f + "7: tables[0].grant_to: empty list: name the restricted roles");
  CHECK(error_of(kHead + "    mode: view\n    grants: manage\n    grant_to: analyst\n") ==
        f + "7: tables[0].grant_to: expected a list of users or roles");
  CHECK(error_of(kHead + "    mode: view\n    grants: manage\n    grant_to: [a, b, a]\n") ==
        f + "7: tables[0].grant_to[2]: role 'a' listed twice");
  CHECK(error_of(kHead + "    mode: view\n    grants: manage\n    grant_to: [Public]\n") ==
        f + "7: tables[0].grant_to[0]: PUBLIC cannot be managed: name the restricted roles");
  CHECK(error_of(kHead + "    exempt: [auditor]\n    mode: view\n    grants: manage\n"
                         "    grant_to: [analyst, auditor]\n") ==
        f + "8: tables[0].grant_to[1]: role 'auditor' is exempt (it reads the raw table): it "
            "cannot lose SELECT on it");
  CHECK(error_of(kHead + "    mode: view\n    grants: manage\n    grant_to: [\"\"]\n") ==
        f + "7: tables[0].grant_to[0]: empty role name");
}

TEST_CASE("database: on the entry, on the file, else backend.dbname") {
  write("database: shop\n" + kHead +
            "  - table: public.orders\n    database: archive\n    k: 3\n"
            "    quasi_identifiers: [city]\n",
        scratch_path("kanon-policy-db-a.yaml"));
  write(kHead, scratch_path("kanon-policy-db-b.yaml"));  // public.people again, in backend.dbname
  const std::string config = scratch_path("kanon-policy-db-config.yaml");
  std::ofstream(config) << "backend: {host: db, port: 5433, user: kanon, dbname: demo}\n"
                           "policies: [kanon-policy-db-a.yaml, kanon-policy-db-b.yaml]\n";
  const auto cfg = load_server_config(config);
  const auto all = load_policies(cfg);
  REQUIRE(all.size() == 3);
  CHECK(all[0].database == "shop");
  CHECK(all[1].database == "archive");
  CHECK(all[2].database == "demo");
  CHECK(database_qualified_name(all[0]) == "shop.public.people");
  CHECK(policies_of(all, "demo").size() == 1);
  CHECK(databases_of(all, "demo") == std::vector<std::string>{"demo", "shop", "archive"});
  CHECK(policies_of(all, "archive").at(0).table == "orders");

  // The same schema.table in two databases: two policies. A bare or
  // schema-qualified name that matches both is ambiguous.
  CHECK(&find_policy(all, "shop.public.people") == &all[0]);
  CHECK(&find_policy(all, "demo.public.people") == &all[2]);
  CHECK(&find_policy(all, "orders") == &all[1]);
  CHECK(&find_policy(all, "archive.public.orders") == &all[1]);
  CHECK_THROWS_WITH_AS(find_policy(all, "public.people"),
                       "no policy for table 'public.people' (ambiguous: qualify it with its "
                       "database) (protected tables: shop.public.people, archive.public.orders, "
                       "demo.public.people)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(find_policy(all, "people"),
                       doctest::Contains("(ambiguous: qualify it with its schema)"), ConfigError);
  CHECK_THROWS_WITH_AS(find_policy(all, "demo.public.orders"),
                       doctest::Contains("no policy for table 'demo.public.orders' (protected"),
                       ConfigError);

  // Each database is reached with the service account, by its name.
  CHECK(service_conninfo(cfg, "archive") ==
        "host=db port=5433 user=kanon dbname=demo application_name=kanon dbname=archive");
  CHECK(dbname_of(service_conninfo(cfg, "archive")) == "archive");
  CHECK(service_conninfo(cfg, "demo") == service_conninfo(cfg));
  CHECK(service_conninfo(cfg, "") == service_conninfo(cfg));
  CHECK(default_database(cfg) == "demo");
}

TEST_CASE("database: twice in one database is an error; kanon's own must then be known") {
  const std::string c = write(kHead +
                                  "  - table: public.people\n    database: shop\n    k: 3\n"
                                  "    quasi_identifiers: [city]\n",
                              scratch_path("kanon-policy-db-c.yaml"));
  const std::string config2 = scratch_path("kanon-policy-db-config2.yaml");
  std::ofstream(config2)
      << "backend: {host: db, port: 5433, dbname: shop}\npolicies: [kanon-policy-db-c.yaml]\n";
  CHECK_THROWS_WITH_AS(
      load_policies(load_server_config(config2)),
      (c + ":5: tables[1].table: table public.people already has a policy in " + c + ":2").c_str(),
      ConfigError);
  // Without backend.dbname (nor dbname in conninfo, nor PGDATABASE), which
  // database the other tables are in is the server's to say: refused.
  const std::string config3 = scratch_path("kanon-policy-db-config3.yaml");
  std::ofstream(config3) << "backend: {host: db, port: 5433}\npolicies: [kanon-policy-db-c.yaml]\n";
  const char* saved = std::getenv("PGDATABASE");
  const std::string saved_value = saved ? saved : "";
  ::unsetenv("PGDATABASE");
  CHECK_THROWS_WITH_AS(load_policies(load_server_config(config3)),
                       (c + ":5: tables[1].table: the policy names database shop, but kanon's "
                            "own database is not configured: set backend.dbname (or dbname in "
                            "backend.conninfo)")
                           .c_str(),
                       ConfigError);
  // The dbname of backend.conninfo counts, also written as a URI.
  auto cfg = load_server_config(config3, "postgresql://kanon@db:5433/main?sslmode=disable");
  CHECK(default_database(cfg) == "main");
  CHECK(load_policies(cfg).at(0).database == "main");
  CHECK(service_conninfo(cfg, "shop") ==
        "postgresql://kanon@db:5433/main?sslmode=disable&dbname=shop");
  CHECK(dbname_of(service_conninfo(cfg, "shop")) == "shop");
  CHECK(dbname_of(service_conninfo(cfg, "a b")) == "a b");
  cfg = load_server_config(config3, "host=db dbname=main");
  CHECK(default_database(cfg) == "main");
  if (saved) ::setenv("PGDATABASE", saved_value.c_str(), 1);
  CHECK(error_of("database: \"\"\n" + kHead) == kPath + ":1: database: empty database name");
  CHECK(error_of(kHead + "    database: [a]\n") ==
        kPath + ":5: tables[0].database: expected a string");
}

TEST_CASE("qualified names split into parts") {
  CHECK(split_qualified_name("db.public.people") ==
        std::vector<std::string>{"db", "public", "people"});
  CHECK(split_qualified_name("\"a.b\".c") == std::vector<std::string>{"a.b", "c"});
  CHECK(split_qualified_name("t") == std::vector<std::string>{"t"});
  CHECK(!split_qualified_name("a..b"));
  CHECK(!split_qualified_name(""));
}

TEST_CASE("join_qualified_name quotes what split_qualified_name would cut, and reads back") {
  using kanon::policy::join_qualified_name;
  using kanon::policy::split_qualified_name;
  CHECK(join_qualified_name({"public", "people"}) == "public.people");
  CHECK(join_qualified_name({"public", "People"}) == "public.People");  // case is kept as is
  CHECK(join_qualified_name({"public", "Odd Table.v2"}) == "public.\"Odd Table.v2\"");
  CHECK(join_qualified_name({"a\"b", "c;d"}) == "\"a\"\"b\".\"c;d\"");
  for (const std::vector<std::string>& parts : {std::vector<std::string>{"public", "people"},
                                                {"s p", "t.u"},
                                                {"q\"", "\"x\""},
                                                {"db", "sch", "t\tab"}})
    CHECK(split_qualified_name(join_qualified_name(parts)) == parts);
}
