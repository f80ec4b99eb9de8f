// People, not rows (policy `person:`, issue 27 item 3), through kanon: a
// transactions table where customers have several purchases each carrying
// their own quasi-identifiers, and one customer with 60 purchases and an
// (age, sex, zip) no one else has. Counting rows, that customer's purchases
// form a released cohort of one person; with `person: customer_id` every
// combination the analyst reads covers at least k customers. The analyst's
// own count (count(DISTINCT customer_id) over what it reads) is the
// independent check; VERIFY agrees.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <pqxx/pqxx>
#include <set>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;

namespace {

constexpr int kK = 5;

void write_policy(const std::string& path, bool person) {
  std::ofstream(path) << "tables:\n  - table: public.purchases\n    k: " << kK
                      << "\n    quasi_identifiers: [age, sex, zip]\n    exempt: [postgres]\n"
                      << (person ? "    person: customer_id\n" : "");
}

// The fewest distinct customers behind a combination the analyst reads, and
// how many combinations have fewer than k.
std::pair<long, long> analyst_count(const std::string& conninfo) {
  pqxx::connection c(conninfo);
  pqxx::nontransaction tx(c);
  const auto r = tx.exec1(
      "SELECT min(n), count(*) FILTER (WHERE n < " + std::to_string(kK) +
      ") FROM (SELECT count(DISTINCT customer_id) AS n FROM purchases GROUP BY age, sex, zip) g");
  return {r[0].as<long>(), r[1].as<long>()};
}

// psql -At on `proxy`'s admin console; fails the test (with kanon's log) on error.
std::string console_ok(KanonProxy& proxy, const std::string& command) {
  const auto r =
      run_command({"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"), "-c", command});
  REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.err << "\nkanon's log:\n" << proxy.log());
  return r.out;
}

}  // namespace

TEST_CASE("person: every released combination covers k customers, however many rows each has") {
  auto& pg = PgSandbox::shared();
  // 300 customers with 1-4 purchases each, their own (age, sex, zip) from a
  // small domain; one customer with 60 purchases alone in theirs.
  pg.psql(
      "DROP TABLE IF EXISTS public.purchases; "
      "CREATE TABLE public.purchases (id serial PRIMARY KEY, customer_id int NOT NULL, "
      "age int, sex text, zip text, amount numeric); "
      "INSERT INTO public.purchases (customer_id, age, sex, zip, amount) "
      "SELECT c, 20 + c % 7, CASE WHEN c % 2 = 0 THEN 'F' ELSE 'M' END, "
      "(1000 + c % 5)::text, n FROM generate_series(1, 300) c, "
      "generate_series(1, 1 + c % 4) n; "
      "INSERT INTO public.purchases (customer_id, age, sex, zip, amount) "
      "SELECT 9999, 99, 'M', '99999', n FROM generate_series(1, 60) n; "
      "GRANT SELECT ON public.purchases TO analyst");
  const std::string policy_path = scratch_path("kanon-person-policy.yaml");
  write_policy(policy_path, false);
  KanonProxy proxy(
      pg.port(), "admin: {database: kanon, users: [postgres]}\npolicies: [" + policy_path + "]\n");
  const auto console = [&](const std::string& command) { return console_ok(proxy, command); };
  console("REFRESH public.purchases");
  // Counting rows: combinations of k rows or more that belong to fewer than
  // k customers are released (a customer with several purchases counts
  // several times).
  const auto [rows_min, rows_below] = analyst_count(proxy.conninfo("analyst"));
  CHECK(rows_min < kK);
  CHECK(rows_below > 0);

  // Counting persons.
  write_policy(policy_path, true);
  REQUIRE(console("RELOAD").find("1 built") != std::string::npos);
  const auto [min, below] = analyst_count(proxy.conninfo("analyst"));
  CHECK(min >= kK);
  CHECK(below == 0);
  {
    pqxx::connection c(proxy.conninfo("analyst"));
    pqxx::nontransaction tx(c);
    CHECK(
        tx.exec1("SELECT count(*) FROM purchases WHERE age = 99 OR zip = '99999'")[0].as<long>() ==
        0);
    CHECK(tx.exec1("SELECT count(*) FROM purchases")[0].as<long>() ==
          std::stol(pg.psql("SELECT count(*) FROM public.purchases")));
  }
  // VERIFY counts persons too: real k (the fewest persons), none below k.
  const std::string verify = console("VERIFY public.purchases");
  CAPTURE(verify);
  CHECK(verify.find("public.purchases|5|" + std::to_string(min) + "|") == 0);
  // The prosecutor's highest risk is 1 / the fewest persons of a class.
  char highest[32];
  std::snprintf(highest, sizeof highest, "%.6g", 1.0 / min);
  CHECK(verify.find(std::string("|ok|") + highest + "|") != std::string::npos);
  CHECK(console("SHOW POLICIES").find("|customer_id|sql\n") != std::string::npos);

  // Over time: purchases arrive (of old customers and new ones), REFRESH,
  // and the analyst links its two reads by id. Every class of (first
  // release, second release) among the purchases in both still covers k
  // customers; VERIFY HISTORY counts the same way. The releases counted in
  // rows are history too (VERIFY HISTORY finds the lone customer in them):
  // a new baseline first.
  CHECK(console("VERIFY HISTORY public.purchases").find("rows below k") != std::string::npos);
  console("REANONYMIZE public.purchases");
  const auto read = [&] {
    pqxx::connection c(proxy.conninfo("analyst"));
    pqxx::nontransaction tx(c);
    std::map<long, std::pair<long, std::string>> out;
    for (const auto& row : tx.exec("SELECT id, customer_id, age, sex, zip FROM purchases"))
      out[row[0].as<long>()] = {row[1].as<long>(), std::string(row[2].c_str()) + "|" +
                                                       row[3].c_str() + "|" + row[4].c_str()};
    return out;
  };
  const auto before = read();
  pg.psql(
      "INSERT INTO public.purchases (customer_id, age, sex, zip, amount) "
      "SELECT CASE WHEN n % 2 = 0 THEN n ELSE 1000 + n END, 20 + n % 7, "
      "CASE WHEN n % 3 = 0 THEN 'F' ELSE 'M' END, (1000 + n % 5)::text, 1 "
      "FROM generate_series(1, 40) n");
  console("REFRESH public.purchases");
  const auto after = read();
  std::map<std::string, std::set<long>> linked;
  for (const auto& [id, second] : after)
    if (auto first = before.find(id); first != before.end())
      linked[first->second.second + " -> " + second.second].insert(second.first);
  REQUIRE(linked.size() > 1);
  for (const auto& [history, customers] : linked) {
    CAPTURE(history);
    CHECK(customers.size() >= static_cast<size_t>(kK));
  }
  const std::string history = console("VERIFY HISTORY public.purchases");
  CAPTURE(history);
  // table|row_key|since|last|releases|policy_k|real_k|linked|new|rows_below_k|...|verdict
  std::vector<std::string> fields;
  for (size_t at = 0, next; at <= history.size(); at = next + 1) {
    next = std::min(history.find_first_of("|\n", at), history.size());
    fields.push_back(history.substr(at, next - at));
  }
  REQUIRE(fields.size() >= 14);
  CHECK(fields[7] != "0");  // linked rows
  CHECK(fields[9] == "0");  // none below k among them but for the reasons told apart:
  // the new purchases, shown at once in this live mode (real_k counts them).
  CHECK(fields[11] != "0");
  pg.psql("DROP TABLE public.purchases");
  std::filesystem::remove(policy_path);
}

TEST_CASE("person: mode materialized with the person a direct identifier, VERIFY sees the holds") {
  // The copy masks customer_id, so VERIFY counts persons on the base table
  // through the copy's own select list, holds included: its combinations and
  // released cells are the copy's.
  auto& pg = PgSandbox::shared();
  pg.psql(
      "DROP TABLE IF EXISTS public.purchases_m; "
      "CREATE TABLE public.purchases_m (id serial PRIMARY KEY, customer_id int NOT NULL, "
      "age int, sex text, zip text); "
      "INSERT INTO public.purchases_m (customer_id, age, sex, zip) "
      "SELECT c, 20 + c % 7, CASE WHEN c % 2 = 0 THEN 'F' ELSE 'M' END, (1000 + c % 5)::text "
      "FROM generate_series(1, 300) c, generate_series(1, 1 + c % 3) n");
  const std::string policy_path = scratch_path("kanon-person-m-policy.yaml");
  std::ofstream(policy_path) << "tables:\n  - table: public.purchases_m\n    k: " << kK
                             << "\n    quasi_identifiers: [age, sex, zip]\n    exempt: [postgres]\n"
                             << "    person: customer_id\n    mode: materialized\n"
                             << "    direct_identifiers: {customer_id: null}\n";
  KanonProxy proxy(
      pg.port(), "admin: {database: kanon, users: [postgres]}\npolicies: [" + policy_path + "]\n");
  const auto console = [&](const std::string& command) { return console_ok(proxy, command); };
  console("REFRESH public.purchases_m");
  // New customers in combinations of their own: held until k arrive together.
  pg.psql(
      "INSERT INTO public.purchases_m (customer_id, age, sex, zip) "
      "SELECT 5000 + n, 20 + n % 7, 'F', (1000 + n % 5)::text FROM generate_series(1, 12) n");
  console("REFRESH public.purchases_m");
  REQUIRE(std::stol(pg.psql("SELECT count(*) FROM kanon.held_keys "
                            "WHERE table_name = 'public.purchases_m'")) > 0);
  // table|k|real_k|groups|groups_below_k|rows|released_fraction|verdict
  const std::string verify = console("VERIFY public.purchases_m");
  CAPTURE(verify);
  std::vector<std::string> f;
  for (size_t at = 0, next; at < verify.size(); at = next + 1) {
    next = std::min(verify.find_first_of("|\n", at), verify.size());
    f.push_back(verify.substr(at, next - at));
  }
  REQUIRE(f.size() >= 8);
  const std::string copy = "kanon_masked.purchases_m";
  const auto value = [&](const std::string& sql) {
    std::string v = pg.psql(sql);
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
    return v;
  };
  CHECK(f[3] == value("SELECT count(*) FROM (SELECT DISTINCT age, sex, zip FROM " + copy + ") d"));
  CHECK(f[5] == value("SELECT count(*) FROM " + copy));
  CHECK(f[6] == value("SELECT round(((count(age) + count(sex) + count(zip)) / (3.0 * count(*)))"
                      "::numeric, 4) FROM " +
                      copy));
  CHECK(std::stol(f[2]) >= kK);
  pg.psql("DROP TABLE public.purchases_m");
  std::filesystem::remove(policy_path);
}
