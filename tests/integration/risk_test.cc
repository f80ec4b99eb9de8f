// Risk and utility on the admin console (docs/risk.md): VERIFY's risk
// columns, SHOW CLASSES and SHOW UTILITY, each checked against what SQL
// computes on the same data — the prosecutor figures from the masked table
// as a restricted user reads it through kanon, the journalist and marketer
// figures from the released classes joined with the population table
// grouped by the masks SHOW PREDICATES prints.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/process.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;

namespace {

const char kUnit = '\x1f', kRecord = '\x1e';

struct Fixture {
  std::string policy_path = scratch_path("kanon-risk-policy.yaml");
  std::unique_ptr<KanonProxy> proxy;

  Fixture() {
    auto& pg = PgSandbox::shared();
    // risk_people is the seed's table; its population holds every one of its
    // rows and more: a third Farmer of Hamlet, two Pilots of Dayton (OH) and
    // three Accountants of Reno (NV), who fall in released classes.
    pg.psql(
        "DROP TABLE IF EXISTS public.risk_people, public.risk_population, public.risk_ohio; "
        "CREATE TABLE public.risk_people AS SELECT * FROM public.people; "
        "GRANT SELECT ON public.risk_people TO analyst; "
        "CREATE TABLE public.risk_population AS SELECT occupation, city, state FROM "
        "public.people UNION ALL VALUES ('Farmer', 'Hamlet', 'OH'), ('Pilot', 'Dayton', 'OH'), "
        "('Pilot', 'Dayton', 'OH'), ('Accountant', 'Reno', 'NV'), ('Accountant', 'Reno', 'NV'), "
        "('Accountant', 'Reno', 'NV'); "
        "CREATE TABLE public.risk_ohio AS SELECT occupation, city, state FROM public.people "
        "WHERE state = 'OH';");
    std::ofstream(policy_path)
        << "tables:\n"
           "  - table: public.risk_people\n"
           "    k: 2\n"
           "    quasi_identifiers: [occupation, city, state]\n"
           "    direct_identifiers: {name: null, ssn: null}\n"
           "    exempt: [postgres]\n"
           "    risk: {threshold: 0.4, population: public.risk_population}\n";
    proxy = std::make_unique<KanonProxy>(
        pg.port(),
        "admin: {database: kanon, users: [postgres]}\npolicies: [" + policy_path + "]\n");
  }
  ~Fixture() { std::filesystem::remove(policy_path); }

  // The console's rows, fields split (psql with separators no value holds).
  std::vector<std::vector<std::string>> rows(const std::string& command, std::string* notices) {
    const auto r = run_command({"psql", "-X", "-At", "-F", std::string(1, kUnit), "-R",
                                std::string(1, kRecord), "-d", proxy->conninfo("postgres", "kanon"),
                                "-c", command});
    REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.err);
    if (notices) *notices = r.err;
    std::vector<std::vector<std::string>> out;
    std::string out_text = r.out;
    while (!out_text.empty() && out_text.back() == '\n') out_text.pop_back();
    size_t start = 0;
    while (start < out_text.size()) {
      size_t end = out_text.find(kRecord, start);
      if (end == std::string::npos) end = out_text.size();
      std::vector<std::string> fields;
      const std::string line = out_text.substr(start, end - start);
      size_t f = 0;
      for (;;) {
        const size_t g = line.find(kUnit, f);
        fields.push_back(line.substr(f, g == std::string::npos ? std::string::npos : g - f));
        if (g == std::string::npos) break;
        f = g + 1;
      }
      out.push_back(std::move(fields));
      start = end + 1;
    }
    return out;
  }

  // Column `name` of a one-row answer.
  std::string field(const std::string& command, const std::string& name,
                    std::string* notices = nullptr) {
    const auto header = columns(command);
    const auto r = rows(command, notices);
    REQUIRE(r.size() == 1);
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return r[0].at(i);
    FAIL("no column " << name << " in " << command);
    return "";
  }

  // Column names of a command's answer (psql without -t prints the header).
  std::vector<std::string> columns(const std::string& command) {
    const auto r = run_command({"psql", "-X", "-A", "-F", std::string(1, kUnit), "-d",
                                proxy->conninfo("postgres", "kanon"), "-c", command});
    REQUIRE(r.exit_code == 0);
    std::string head = r.out.substr(0, r.out.find('\n'));
    std::vector<std::string> out;
    size_t f = 0;
    for (;;) {
      const size_t g = head.find(kUnit, f);
      out.push_back(head.substr(f, g == std::string::npos ? std::string::npos : g - f));
      if (g == std::string::npos) break;
      f = g + 1;
    }
    return out;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

double number(const std::string& text) {
  REQUIRE_MESSAGE(!text.empty(), "NULL where a number was expected");
  return std::stod(text);
}

// One row of SQL, as text (NULL as "").
std::vector<std::string> sql_row(const std::string& conninfo, const std::string& query) {
  pqxx::connection c(conninfo);
  pqxx::nontransaction tx(c);
  const auto r = tx.exec1(query);
  std::vector<std::string> out;
  for (const auto& f : r) out.push_back(f.is_null() ? "" : f.as<std::string>());
  return out;
}

// The masks SHOW PREDICATES prints, by column.
std::map<std::string, std::string> masks(Fixture& f, const std::string& table) {
  std::map<std::string, std::string> out;
  for (const auto& r : f.rows("SHOW PREDICATES " + table, nullptr)) out[r.at(0)] = r.at(3);
  return out;
}

}  // namespace

TEST_CASE("VERIFY: prosecutor figures equal SQL's over the masked table restricted users read") {
  auto& f = fixture();
  const std::string verify = "VERIFY risk_people";
  // The columns VERIFY had keep their place; the risk columns follow.
  const auto header = f.columns(verify);
  REQUIRE(header.size() == 19);
  CHECK(header[0] == "table");
  CHECK(header[6] == "released_fraction");
  CHECK(header[7] == "verdict");
  CHECK(header[8] == "prosecutor_max_risk");
  CHECK(header[18] == "marketer_risk");

  // Classes as the analyst sees them through kanon.
  const auto sql =
      sql_row(f.proxy->conninfo("analyst"),
              "WITH c AS (SELECT count(*) AS f FROM risk_people GROUP BY occupation, city, state) "
              "SELECT 1.0 / min(f), (SELECT sum(f) FROM c WHERE f = (SELECT min(f) FROM c)), "
              "count(*)::float8 / sum(f), sum(f) FILTER (WHERE 1.0 / f > 0.4), "
              "coalesce(sum(f) FILTER (WHERE 1.0 / f > 0.4), 0)::float8 / sum(f) FROM c");
  CHECK(number(f.field(verify, "prosecutor_max_risk")) == doctest::Approx(number(sql[0])));
  CHECK(f.field(verify, "records_at_max_risk") == sql[1]);
  CHECK(number(f.field(verify, "prosecutor_avg_risk")) == doctest::Approx(number(sql[2])));
  CHECK(f.field(verify, "records_above_threshold") == sql[3]);
  CHECK(number(f.field(verify, "share_above_threshold")) == doctest::Approx(number(sql[4])));
  CHECK(f.field(verify, "risk_threshold") == "0.4");
  // By hand: classes of 2, 2, 2, 3 and 2 rows.
  CHECK(sql[0].rfind("0.5", 0) == 0);
  CHECK(sql[1] == "8");
  CHECK(number(sql[2]) == doctest::Approx(5.0 / 11));
  CHECK(sql[3] == "8");
}

TEST_CASE("VERIFY: journalist and marketer figures equal SQL's join with the population") {
  auto& f = fixture();
  const auto m = masks(f, "risk_people");
  REQUIRE(m.size() == 3);
  const std::string select =
      m.at("occupation") + " AS a, " + m.at("city") + " AS b, " + m.at("state") + " AS c";
  const auto sql =
      sql_row(PgSandbox::shared().conninfo(),
              "WITH s AS (SELECT " + select + ", count(*) AS f FROM public.risk_people " +
                  "GROUP BY 1, 2, 3), p AS (SELECT " + select +
                  ", count(*) AS pf FROM public.risk_population GROUP BY 1, 2, 3), j AS (SELECT "
                  "f, pf FROM s JOIN p ON s.a IS NOT DISTINCT FROM p.a AND s.b IS NOT DISTINCT "
                  "FROM p.b AND s.c IS NOT DISTINCT FROM p.c) "
                  "SELECT 1.0 / min(pf), greatest(count(*)::float8 / sum(pf), "
                  "sum(f::float8 / pf) / sum(f)), "
                  "coalesce(sum(f) FILTER (WHERE 1.0 / pf > 0.4), 0)::float8 / sum(f), "
                  "sum(f::float8 / pf) / sum(f), count(*) FROM j");
  CHECK(sql[4] == "5");  // every released class is in the population
  const std::string verify = "VERIFY risk_people";
  std::string notices;
  CHECK(f.field(verify, "population", &notices) == "public.risk_population");
  CHECK(notices.empty());
  CHECK(number(f.field(verify, "journalist_max_risk")) == doctest::Approx(number(sql[0])));
  CHECK(number(f.field(verify, "journalist_avg_risk")) == doctest::Approx(number(sql[1])));
  CHECK(number(f.field(verify, "journalist_share_above_threshold")) ==
        doctest::Approx(number(sql[2])));
  CHECK(number(f.field(verify, "marketer_risk")) == doctest::Approx(number(sql[3])));
  // By hand: population classes of 3, 2, 4, 6 and 2 rows for released
  // classes of 2, 2, 2, 3 and 2: sum f/F = 11/3.
  CHECK(number(sql[0]) == doctest::Approx(0.5));
  CHECK(number(sql[3]) == doctest::Approx(11.0 / 3 / 11));
  CHECK(number(sql[2]) == doctest::Approx(4.0 / 11));
}

TEST_CASE("VERIFY: a population without a released class gives a notice and NULL figures") {
  auto& f = fixture();
  std::ofstream(f.policy_path, std::ios::app)
      << "  - table: public.people\n"
         "    k: 2\n"
         "    quasi_identifiers: [occupation, city, state]\n"
         "    direct_identifiers: {name: null, ssn: null}\n"
         "    risk: {population: public.risk_ohio}\n";
  REQUIRE(f.rows("RELOAD", nullptr).size() == 1);
  std::string notices;
  CHECK(f.field("VERIFY public.people", "journalist_max_risk", &notices).empty());
  CHECK(notices.find("no journalist or marketer risk: population table public.risk_ohio: 1 "
                     "released class(es) of 2 record(s) have no record in the population table") !=
        std::string::npos);
  CHECK(f.field("VERIFY public.people", "population").empty());
  // Without a population the marketer's figure is J / n, the prosecutor's average.
  CHECK(number(f.field("VERIFY public.people", "marketer_risk")) ==
        doctest::Approx(number(f.field("VERIFY public.people", "prosecutor_avg_risk"))));
  CHECK(f.field("VERIFY public.people", "risk_threshold") == "0.5");  // 1/k
}

TEST_CASE("SHOW CLASSES: the class sizes SQL counts over the masked table") {
  auto& f = fixture();
  pqxx::connection c(f.proxy->conninfo("analyst"));
  pqxx::nontransaction tx(c);
  const auto sql = tx.exec(
      "SELECT f, count(*), sum(f) FROM (SELECT count(*) AS f FROM risk_people "
      "GROUP BY occupation, city, state) AS c GROUP BY f ORDER BY f");
  const auto rows = f.rows("SHOW CLASSES risk_people", nullptr);
  REQUIRE(rows.size() == sql.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i][0] == sql[static_cast<int>(i)][0].as<std::string>());  // class_size
    CHECK(rows[i][1] == sql[static_cast<int>(i)][1].as<std::string>());  // classes
    CHECK(rows[i][2] == sql[static_cast<int>(i)][2].as<std::string>());  // rows
    CHECK(number(rows[i][4]) == doctest::Approx(1.0 / number(rows[i][0])));
    CHECK(rows[i][5] == (1.0 / number(rows[i][0]) > 0.4 ? "t" : "f"));
  }
  CHECK(rows.size() == 2);  // four classes of 2, one of 3
}

TEST_CASE("SHOW UTILITY: released rows and distinct values, as SQL counts them") {
  auto& f = fixture();
  const auto masked = sql_row(f.proxy->conninfo("analyst"),
                              "SELECT count(*), count(occupation), count(city), count(state), "
                              "count(DISTINCT occupation), count(DISTINCT city), "
                              "count(DISTINCT state) FROM risk_people");
  const auto raw = sql_row(PgSandbox::shared().conninfo(),
                           "SELECT count(DISTINCT occupation), count(DISTINCT city), "
                           "count(DISTINCT state) FROM public.risk_people");
  const auto rows = f.rows("SHOW UTILITY risk_people", nullptr);
  REQUIRE(rows.size() == 3);
  const char* names[] = {"occupation", "city", "state"};
  for (size_t i = 0; i < 3; ++i) {
    CHECK(rows[i][0] == names[i]);
    CHECK(rows[i][1] == masked[0]);
    CHECK(rows[i][2] == masked[1 + i]);
    char fraction[32];  // printed as VERIFY prints released_fraction
    std::snprintf(fraction, sizeof fraction, "%.4f", number(masked[1 + i]) / number(masked[0]));
    CHECK(rows[i][3] == fraction);
    CHECK(rows[i][4] == raw[i]);
    CHECK(rows[i][5] == masked[4 + i]);
  }
  // By hand: occupation shown for the Farmers and the Accountants not of OH.
  CHECK(rows[0][2] == "5");
}
