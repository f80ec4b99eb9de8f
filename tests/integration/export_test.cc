// EXPORT through the admin console with psql against a real PostgreSQL:
// published tables whose quasi-identifier classes hold >= k rows (checked
// with SQL), report files that agree with the table, SHOW EXPORTS, clear
// errors that leave no table, Ctrl-C during a long search that leaves no
// table, the CLI, the HTML report rendered by headless Chromium, and a
// policy with `person:` whose published classes hold >= k customers.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <regex>
#include <thread>

#include "tests/support/demo_data.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;
namespace fs = std::filesystem;

namespace {

using kanon::testing::adult_dir;

const char* const kAdultQis =
    "sex, age, race, \"marital-status\", education, \"native-country\", workclass, occupation";

struct Fixture {
  std::string dir = scratch_path("export");
  std::string policy_path = dir + "/big.yaml";
  std::unique_ptr<KanonProxy> proxy;

  Fixture() {
    fs::create_directories(dir + "/reports");
    auto& pg = PgSandbox::shared();
    // A larger copy of ADULT (x4) with its own policy, for the cancel test.
    pg.psql(
        "DROP TABLE IF EXISTS public.adult_big; CREATE TABLE public.adult_big AS "
        "SELECT a.* FROM public.adult a, generate_series(1, 4);");
    // Purchases: 300 customers with 1-4 purchases each carrying their own
    // (age, sex, zip), four or five customers per combination, and one
    // customer with 60 purchases alone in theirs. Two copies: one exported
    // with `person: customer_id`, one counting rows.
    const char* const purchases =
        "(id serial PRIMARY KEY, customer_id int NOT NULL, age int, sex text, zip text, "
        "amount numeric); INSERT INTO {} (customer_id, age, sex, zip, amount) "
        "SELECT c, 20 + c % 7, CASE WHEN c % 2 = 0 THEN 'F' ELSE 'M' END, (1000 + c % 5)::text, n "
        "FROM generate_series(1, 300) c, generate_series(1, 1 + c % 4) n; "
        "INSERT INTO {} (customer_id, age, sex, zip, amount) "
        "SELECT 9999, 99, 'M', '99999', n FROM generate_series(1, 60) n;";
    for (const std::string t : {"public.purchases_persons", "public.purchases_rows"}) {
      std::string sql = std::string("DROP TABLE IF EXISTS ").append(t).append("; CREATE TABLE ");
      sql.append(t).append(" ").append(purchases);
      for (size_t at; (at = sql.find("{}")) != std::string::npos;) sql.replace(at, 2, t);
      pg.psql(sql);
    }
    std::ofstream(policy_path) << "tables:\n"
                                  "  - table: public.adult_big\n"
                                  "    k: 2\n"
                                  "    quasi_identifiers: [sex, age, race, marital-status, "
                                  "education, native-country, workclass, occupation]\n"
                                  "    exempt: [postgres]\n"
                                  "    max_nodes: 100000\n"
                                  "  - table: public.purchases_persons\n"
                                  "    k: 5\n"
                                  "    quasi_identifiers: [age, sex, zip]\n"
                                  "    person: customer_id\n"
                                  "    exempt: [postgres]\n"
                                  "  - table: public.purchases_rows\n"
                                  "    k: 5\n"
                                  "    quasi_identifiers: [age, sex, zip]\n"
                                  "    exempt: [postgres]\n";
    proxy = std::make_unique<KanonProxy>(
        pg.port(), "admin: {database: kanon, users: [postgres]}\npolicies: [" + source_dir() +
                       "/config/policies/people.yaml, " + source_dir() +
                       "/config/policies/adult.yaml, " + policy_path + "]\n");
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  CommandResult console(const std::string& command) {
    return run_command(
        {"psql", "-X", "-At", "-d", proxy->conninfo("postgres", "kanon"), "-c", command});
  }
  std::string sql(const std::string& query) {
    pqxx::connection c(PgSandbox::shared().conninfo());
    pqxx::nontransaction tx(c);
    const auto r = tx.exec(query);
    return r.empty() || r[0][0].is_null() ? "" : r[0][0].c_str();
  }
  bool table_exists(const std::string& name) {
    return sql("SELECT to_regclass('" + name + "') IS NOT NULL") == "t";
  }
  std::string exports_count() {
    return table_exists("kanon.exports") ? sql("SELECT count(*) FROM kanon.exports") : "0";
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\n') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": ([0-9.e+-]+)")))
    FAIL("no " << key << " in " << json);
  return m[1];
}

// The EXPORT result row: published|rows|levels|k_achieved|classes|suppressed|loss|json|html
std::vector<std::string> export_ok(Fixture& f, const std::string& command,
                                   std::string* err = nullptr) {
  const auto r = f.console(command);
  REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.err);
  if (err) *err = r.err;
  const auto row = split(r.out, '|');
  REQUIRE(row.size() == 9);
  return row;
}

}  // namespace

TEST_CASE("EXPORT people: direct identifiers dropped, classes of >= k rows, report agrees") {
  auto& f = fixture();
  f.sql("DROP TABLE IF EXISTS public.people_anonymized");
  const auto row = export_ok(f, "EXPORT people WITH (report_dir = '" + f.dir + "/reports')");
  CHECK(row[0] == "public.people_anonymized");
  CHECK(row[1] == "11");  // no suppression in the policy: every row published
  CHECK(f.sql("SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM "
              "information_schema.columns WHERE table_name = 'people_anonymized'") ==
        "id,occupation,city,state,diagnosis");
  CHECK(f.sql("SELECT data_type FROM information_schema.columns WHERE table_name = "
              "'people_anonymized' AND column_name = 'id'") == "integer");
  const std::string min_class = f.sql(
      "SELECT min(n) FROM (SELECT count(*) n FROM public.people_anonymized "
      "GROUP BY occupation, city, state) s");
  CHECK(std::stoi(min_class) >= 2);
  CHECK(row[3] == min_class);
  CHECK(row[4] == f.sql("SELECT count(*) FROM (SELECT DISTINCT occupation, city, state FROM "
                        "public.people_anonymized) s"));
  // The other columns are unchanged, row for row.
  CHECK(f.sql("SELECT count(*) FROM public.people p JOIN public.people_anonymized a USING (id) "
              "WHERE p.diagnosis = a.diagnosis") == "11");
  const std::string json = read_file(row[7]);
  REQUIRE(!json.empty());
  CHECK(json_number(json, "min_class_size") == row[3]);
  CHECK(json_number(json, "classes") == row[4]);
  CHECK(json_number(json, "rows_out") == "11");
  CHECK(fs::exists(row[8]));
  // A restricted session reads the published copy through kanon as it is
  // (it has no policy of its own; it is already anonymized).
  {
    pqxx::connection c(f.proxy->conninfo("analyst"));
    pqxx::nontransaction tx(c);
    const std::string q =
        "SELECT string_agg(concat_ws('/', id, occupation, city, state), ',' ORDER BY id) FROM "
        "public.people_anonymized";
    CHECK(tx.exec(q)[0][0].as<std::string>() == f.sql(q));
  }
  const auto shown = f.console("SHOW EXPORTS");
  REQUIRE(shown.exit_code == 0);
  CHECK(shown.out.find("|public.people|public.people_anonymized|2|" + row[3] + "|") !=
        std::string::npos);
  CHECK(shown.out.find(row[7]) != std::string::npos);
}

TEST_CASE("EXPORT adult with the shipped hierarchies: k=5 within 2% suppression, via SQL") {
  auto& f = fixture();
  f.sql("DROP TABLE IF EXISTS public.adult_pub");
  std::string notices;
  const auto row = export_ok(f,
                             "EXPORT public.adult TO public.adult_pub WITH (hierarchies = '" +
                                 adult_dir() + "', report_dir = '" + f.dir +
                                 "/reports', risk_threshold = 0.1, population = 'public.adult')",
                             &notices);
  CHECK(notices.find("NOTICE:  EXPORT public.adult: loaded 30162 rows") != std::string::npos);
  CHECK(notices.find("best transformation found") != std::string::npos);
  const std::string min_class = f.sql(std::string("SELECT min(n) FROM (SELECT count(*) n FROM "
                                                  "public.adult_pub GROUP BY ") +
                                      kAdultQis + ") s");
  CHECK(std::stoi(min_class) >= 5);
  CHECK(row[3] == min_class);
  const int published = std::stoi(f.sql("SELECT count(*) FROM public.adult_pub"));
  const int suppressed = std::stoi(row[5]);
  CHECK(published == 30162 - suppressed);  // suppressed rows are dropped
  CHECK(suppressed <= 603);                // floor(0.02 x 30162)
  CHECK(row[1] == std::to_string(published));
  // Generalized values come from the hierarchy files (age is published as text).
  CHECK(f.sql("SELECT data_type FROM information_schema.columns WHERE table_name = 'adult_pub' "
              "AND column_name = 'age'") == "text");
  const std::string json = read_file(row[7]);
  CHECK(json_number(json, "min_class_size") == min_class);
  CHECK(json_number(json, "suppressed") == row[5]);
  CHECK(json_number(json, "rows_out") == std::to_string(published));
  CHECK(json.find("adult_hierarchy_age.csv") != std::string::npos);
  CHECK(f.sql("SELECT report->>'min_class_size' FROM kanon.exports WHERE target = "
              "'public.adult_pub' ORDER BY id DESC LIMIT 1") == min_class);

  // Risk (docs/risk.md): the prosecutor figures as SQL computes them on the
  // published table.
  const auto report = nlohmann::json::parse(json);
  const auto& risk = report.at("risk");
  const std::string classes =
      std::string("(SELECT count(*) AS f FROM public.adult_pub GROUP BY ") + kAdultQis + ")";
  CHECK(risk.at("threshold").get<double>() == doctest::Approx(0.1));
  CHECK(risk.at("records").get<int>() == published);
  CHECK(risk.at("prosecutor").at("highest").get<double>() ==
        doctest::Approx(1.0 / std::stoi(min_class)));
  CHECK(std::to_string(risk.at("prosecutor").at("records_at_highest").get<int>()) ==
        f.sql("SELECT sum(f) FROM " + classes + " c WHERE f = " + min_class));
  CHECK(
      risk.at("prosecutor").at("average").get<double>() ==
      doctest::Approx(std::stod(f.sql("SELECT count(*)::float8 / sum(f) FROM " + classes + " c"))));
  CHECK(std::to_string(risk.at("prosecutor").at("records_above_threshold").get<int>()) ==
        f.sql("SELECT coalesce(sum(f), 0) FROM " + classes + " c WHERE 1.0 / f > 0.1"));
  // The source as its own population: every row placed (the hierarchies
  // list every value), each class at least as large there.
  REQUIRE(risk.at("journalist").is_object());
  CHECK(risk.at("population").at("rows").get<int>() == 30162);
  CHECK(risk.at("population").at("unplaced_rows").get<int>() == 0);
  CHECK(risk.at("journalist").at("highest").get<double>() <=
        risk.at("prosecutor").at("highest").get<double>());
  CHECK(risk.at("marketer").get<double>() <= risk.at("prosecutor").at("average").get<double>());
  CHECK(risk.at("marketer_from") == "population");
  // Utility per column: the metrics are the mean of the columns' precision
  // and the geometric mean of their loss.
  double precision = 0, log_loss = 0;
  for (const auto& a : report.at("attributes")) {
    precision += a.at("precision").get<double>();
    log_loss += std::log1p(a.at("loss").get<double>());
    CHECK(a.at("released_fraction").get<double>() >= 0);
    CHECK(a.at("released_fraction").get<double>() <= 1);
  }
  const double d = static_cast<double>(report.at("attributes").size());
  CHECK(precision / d == doctest::Approx(report.at("loss").at("precision").get<double>()));
  CHECK(std::exp(log_loss / d) - 1 == doctest::Approx(report.at("loss").at("loss").get<double>()));
}

TEST_CASE("EXPORT adult with Mondrian: every row published, classes of >= k, ranges and nodes") {
  auto& f = fixture();
  f.sql("DROP TABLE IF EXISTS public.adult_mondrian");
  std::string notices;
  // Hierarchies for every attribute but age: age (a number) becomes ranges.
  const std::string dir = f.dir + "/mondrian-h";
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(adult_dir()))
    if (e.path().filename().string().find("hierarchy_age") == std::string::npos &&
        e.path().extension() == ".csv" && e.path().filename() != "adult.csv")
      fs::copy_file(e.path(), dir + "/" + e.path().filename().string(),
                    fs::copy_options::overwrite_existing);
  const auto row =
      export_ok(f,
                "EXPORT public.adult TO public.adult_mondrian WITH (algorithm = "
                "mondrian, k = 10, hierarchies = '" +
                    dir + "', report_dir = '" + f.dir + "/reports', population = 'public.adult')",
                &notices);
  CHECK(notices.find("rows partitioned into") != std::string::npos);
  CHECK(row[1] == "30162");  // Mondrian suppresses nothing
  CHECK(row[2] == "per class (mondrian)");
  CHECK(row[5] == "0");
  const std::string min_class = f.sql(std::string("SELECT min(n) FROM (SELECT count(*) n FROM "
                                                  "public.adult_mondrian GROUP BY ") +
                                      kAdultQis + ") s");
  CHECK(std::stoi(min_class) >= 10);
  CHECK(row[3] == min_class);
  CHECK(row[4] == f.sql(std::string("SELECT count(*) FROM (SELECT DISTINCT ") + kAdultQis +
                        " FROM public.adult_mondrian) s"));
  // Ages are single values or ranges "[lo-hi]" that hold the original ages:
  // as many rows per range as the source has in it.
  CHECK(f.sql("SELECT count(*) FROM public.adult_mondrian WHERE age !~ "
              "'^([0-9]+|\\[[0-9]+-[0-9]+\\])$'") == "0");
  CHECK(f.sql("SELECT count(*) FROM public.adult_mondrian WHERE age LIKE '[%'") != "0");
  // Row for row (id is published as it is), the range holds the original age.
  CHECK(f.sql("SELECT count(*) FROM public.adult a JOIN public.adult_mondrian m USING (id) WHERE "
              "a.age NOT BETWEEN split_part(trim(both '[]' from m.age), '-', 1)::int AND "
              "coalesce(nullif(split_part(trim(both '[]' from m.age), '-', 2), ''), trim(both "
              "'[]' from m.age))::int") == "0");
  // Categorical attributes take hierarchy nodes, e.g. education's.
  CHECK(f.sql("SELECT count(*) FROM public.adult_mondrian WHERE education IN ('Higher education', "
              "'Undergraduate', 'Secondary education', 'High School', '*')") != "0");
  const std::string json = read_file(row[7]);
  CHECK(json.find("\"algorithm\": \"mondrian (span)\"") != std::string::npos);
  CHECK(json_number(json, "min_class_size") == min_class);
  CHECK(json_number(json, "gcp").substr(0, 6) == row[6].substr(0, 6));
  CHECK(std::stod(row[6]) > 0);
  CHECK(std::stod(row[6]) < 1);
  CHECK(json.find("\"hierarchy\": \"numeric ranges\"") != std::string::npos);
  // No journalist risk for Mondrian, and the report says why.
  const auto risk = nlohmann::json::parse(json).at("risk");
  CHECK(risk.at("journalist").is_null());
  CHECK(risk.at("population_note").get<std::string>().find("Mondrian cuts its classes") == 0);
  CHECK(risk.at("prosecutor").at("highest").get<double>() ==
        doctest::Approx(1.0 / std::stoi(min_class)));
  CHECK(notices.find("no journalist risk: Mondrian") != std::string::npos);
}

TEST_CASE("EXPORT with person: every published class holds k customers, k_achieved in persons") {
  auto& f = fixture();
  // The fewest distinct customers behind a published combination, counted by
  // PostgreSQL on the published table.
  const auto min_customers = [&](const std::string& table) {
    return f.sql("SELECT min(n) FROM (SELECT count(DISTINCT customer_id) n FROM " + table +
                 " GROUP BY age, sex, zip) s");
  };
  // Counting rows, the heavy customer's 60 purchases are a class of their own.
  f.sql("DROP TABLE IF EXISTS public.purchases_rows_pub");
  const auto rows = export_ok(
      f, "EXPORT public.purchases_rows TO public.purchases_rows_pub WITH (report_dir = '" + f.dir +
             "/reports')");
  CHECK(std::stoi(min_customers("public.purchases_rows_pub")) < 5);

  for (const std::string algorithm : {"flash", "mondrian"}) {
    CAPTURE(algorithm);
    const std::string target = "public.purchases_pub_" + algorithm;
    f.sql("DROP TABLE IF EXISTS " + target);
    const auto row = export_ok(f, "EXPORT public.purchases_persons TO " + target +
                                      " WITH (algorithm = " + algorithm + ", report_dir = '" +
                                      f.dir + "/reports')");
    const std::string min = min_customers(target);
    CHECK(std::stoi(min) >= 5);
    CHECK(row[3] == min);  // k_achieved counts persons
    CHECK(f.sql("SELECT count(*) FROM " + target +
                " WHERE customer_id = 9999 AND age = '99' "
                "AND zip = '99999'") == "0");
    // The person text is the engine's only; the published columns are the table's.
    CHECK(f.sql("SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM "
                "information_schema.columns WHERE table_schema || '.' || table_name = '" +
                target + "'") == "id,customer_id,age,sex,zip,amount");
    const std::string json = read_file(row[7]);
    CHECK(json.find("\"counts\": \"persons\"") != std::string::npos);
    CHECK(json.find("\"person\": \"customer_id\"") != std::string::npos);
    CHECK(json_number(json, "min_class_size") == min);
    CHECK(read_file(row[8]).find("smallest class in persons") != std::string::npos);
    const auto shown = f.console("SHOW EXPORTS");
    REQUIRE(shown.exit_code == 0);
    CHECK(shown.out.find("|public.purchases_persons|" + target + "|5|" + min + "|") !=
          std::string::npos);
  }
  // kanon export to a CSV file: k achieved in persons, no person column.
  const std::string csv = f.dir + "/purchases.csv";
  const auto r = run_command({kanon_executable(), "export", "--config", f.proxy->config_path(),
                              "--table", "public.purchases_persons", "--to-csv", csv, "--with",
                              "report_dir = '" + f.dir + "/reports'"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex("k achieved ([0-9]+) persons")));
  CHECK(std::stoi(m[1]) >= 5);
  CHECK(read_file(csv).rfind("id;customer_id;age;sex;zip;amount\n", 0) == 0);
}

TEST_CASE("wrong hierarchy or option: clear error, no table, no exports row") {
  auto& f = fixture();
  const std::string before = f.exports_count();
  const std::string bad = f.dir + "/bad_age.csv";
  std::ofstream(bad) << "17;young\n18;young\n";  // does not cover the data
  const auto r = f.console("EXPORT adult TO public.adult_bad WITH (hierarchies = '" + adult_dir() +
                           "', \"hierarchy.age\" = '" + bad + "')");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("ERROR:  kanon export:") != std::string::npos);
  CHECK(r.err.find("bad_age.csv") != std::string::npos);
  CHECK_FALSE(f.table_exists("public.adult_bad"));

  const auto o = f.console("EXPORT adult TO public.adult_bad WITH (k = 1)");
  CHECK(o.exit_code != 0);
  CHECK(o.err.find("option k: '1' must be a whole number of at least 2") != std::string::npos);
  const auto u = f.console("EXPORT adult TO public.adult_bad WITH (speed = 11)");
  CHECK(u.err.find("unknown option 'speed'") != std::string::npos);
  // A failure on the backend after CREATE TABLE and the rows: rolled back.
  const auto g = f.console("EXPORT people TO public.people_bad WITH (grant = 'nosuchrole')");
  CHECK(g.exit_code != 0);
  CHECK(g.err.find("role \"nosuchrole\" does not exist") != std::string::npos);
  CHECK_FALSE(f.table_exists("public.people_bad"));
  const auto t = f.console("EXPORT nosuchtable");
  CHECK(t.exit_code != 0);
  CHECK(t.err.find("nosuchtable") != std::string::npos);
  CHECK_FALSE(f.table_exists("public.adult_bad"));
  CHECK(f.exports_count() == before);
}

TEST_CASE("Ctrl-C in psql during a long EXPORT stops it and leaves no table") {
  auto& f = fixture();
  const std::string before = f.exports_count();
  const std::string log = f.dir + "/cancel.log";
  // The export is held where it creates its table: another transaction
  // creates one of the same name and keeps it open, so the export's CREATE
  // TABLE waits for it. Ctrl-C lands meanwhile, whatever the machine's speed;
  // once the other transaction rolls back, the export finds the cancel
  // before it commits.
  pqxx::connection holder(PgSandbox::shared().conninfo("postgres"));
  pqxx::work hold(holder);
  hold.exec("CREATE TABLE public.adult_cancel (x int)");
  ChildProcess psql({"psql", "-X", "-At", "-d", f.proxy->conninfo("postgres", "kanon"), "-c",
                     "EXPORT adult_big TO public.adult_cancel WITH (hierarchies = '" + adult_dir() +
                         "', algorithm = bfs, k = 20, suppression = 0)"},
                    log);
  pqxx::connection probe(PgSandbox::shared().conninfo("postgres"));
  const auto export_waits = [&] {
    pqxx::nontransaction tx(probe);
    return tx.exec1("SELECT count(*) FROM pg_locks WHERE NOT granted AND pid <> " +
                    std::to_string(holder.backendpid()))[0]
               .as<int>() > 0;
  };
  bool waiting = false;
  for (int i = 0; i < 6000 && !waiting && psql.running(); ++i) {
    waiting = export_waits();
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE_MESSAGE(waiting, read_file(log));
  // psql prints this once kanon has taken the request (it waits for kanon
  // to close the cancel connection).
  REQUIRE(::kill(psql.pid(), SIGINT) == 0);
  bool sent = false;
  for (int i = 0; i < 6000 && !sent && psql.running(); ++i) {
    sent = read_file(log).find("Cancel request sent") != std::string::npos;
    if (!sent) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK_MESSAGE(sent, read_file(log));
  hold.abort();
  const int code = psql.signal_and_wait(0, 120);
  const std::string text = read_file(log);
  CHECK_MESSAGE(code != 0, text);
  CHECK_MESSAGE(text.find("canceled by the user; nothing was written") != std::string::npos,
                text << "\nkanon's log:\n"
                     << f.proxy->log());
  CHECK_FALSE(f.table_exists("public.adult_cancel"));
  CHECK(f.exports_count() == before);
  // The console still works afterwards.
  CHECK(f.console("SHOW EXPORTS").exit_code == 0);
}

TEST_CASE("kanon export from the CLI: progress on stderr, a CSV file") {
  auto& f = fixture();
  const std::string csv = f.dir + "/people.csv";
  const auto r = run_command({kanon_executable(), "export", "--config", f.proxy->config_path(),
                              "--table", "public.people", "--to-csv", csv, "--with",
                              "k = 3, report_dir = '" + f.dir + "/reports'"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("EXPORT public.people: loaded 11 rows") != std::string::npos);
  CHECK(r.out.find("published " + csv + "\n") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex("k achieved ([0-9]+)")));
  CHECK(std::stoi(m[1]) >= 3);
  const std::string text = read_file(csv);
  CHECK(text.rfind("id;occupation;city;state;diagnosis\n", 0) == 0);
  CHECK(text.find("Ada Quill") == std::string::npos);
  CHECK_FALSE(fs::exists(csv + ".kanon-tmp"));
}

TEST_CASE("the HTML report renders in headless Chromium") {
  auto& f = fixture();
  const auto row = export_ok(f,
                             "EXPORT people TO public.people_chromium WITH (replace = true, "
                             "report_dir = '" +
                                 f.dir + "/reports')");
  const std::string html = row[8];
  REQUIRE(fs::exists(html));
  const auto shot = [&](const std::string& url, const std::string& png) {
    return run_command({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--window-size=1000,1200",
                        "--user-data-dir=" + f.dir + "/chromium", "--screenshot=" + png, url});
  };
  const std::string png = f.dir + "/report.png", blank = f.dir + "/blank.png";
  const auto r = shot("file://" + html, png);
  REQUIRE_MESSAGE(fs::exists(png), r.err);
  const auto b = shot("about:blank", blank);
  REQUIRE_MESSAGE(fs::exists(blank), b.err);
  CHECK(r.err.find("Uncaught") == std::string::npos);
  // A page with text, tables and a histogram compresses far worse than blank white.
  const std::string page = read_file(png), empty = read_file(blank);
  CHECK(page.rfind("\x89PNG", 0) == 0);
  CHECK(page != empty);
  CHECK(page.size() > 2 * empty.size());
  // The DOM Chromium built holds the histogram bars.
  const auto dom =
      run_command({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                   "--user-data-dir=" + f.dir + "/chromium", "--dump-dom", "file://" + html});
  CHECK(dom.out.find("<rect") != std::string::npos);
  CHECK(dom.out.find("Class sizes") != std::string::npos);
}
