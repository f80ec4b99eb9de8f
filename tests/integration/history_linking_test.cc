// Privacy over time as an analyst measures it (issue 27): a keyed copy of
// ADULT (k = 5, eight quasi-identifiers) read in full as a restricted login
// through kanon before and after a change (0.1/1/5% inserted, 1% deleted,
// 1% updated) and a REFRESH, the reads linked by id. The counter here shares
// no code with kanon: it groups ids by the tuples the analyst saw. Rows
// there throughout stay in classes of at least k over all reads unless a
// deletion took their cohort's members or a live mode showed an update
// (both reported by VERIFY HISTORY, with the analyst's count); new rows
// (only in the later reads) are their own candidates: in mode: inline they
// are shown at once and reported, in mode: materialized none is below k.
// Then ADULT as published, without a key, in every mode.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <pqxx/pqxx>
#include <set>
#include <sstream>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;

namespace {

constexpr int kK = 5;
const char* const kQis =
    "sex, age::text, race, \"marital-status\", education, \"native-country\", workclass, "
    "occupation";

// id -> the tuple the analyst read (NULLs as "\x01").
using Read = std::map<long, std::string>;

// The tuple of a row read as (link, quasi-identifiers...).
std::string tuple_of(const pqxx::row& row) {
  std::string t;
  for (int i = 1; i < static_cast<int>(row.size()); ++i)
    t += (row[i].is_null() ? std::string("\x01") : row[i].c_str()) + std::string("\x1f");
  return t;
}

Read read_all(const std::string& conninfo, const std::string& table) {
  pqxx::connection c(conninfo);
  pqxx::nontransaction tx(c);
  Read out;
  for (const auto& row : tx.exec(std::string("SELECT id, ") + kQis + " FROM " + table))
    out[row[0].as<long>()] = tuple_of(row);
  return out;
}

// A read linked through `ref`, a column whose values a few rows share (a
// linked group): a group's rows, ordered by the tuple they showed, get the
// ids ref * 1000 + 0, 1, ... The tables below duplicate whole rows, so the
// rows of a group are interchangeable and any pairing of two reads' tuples
// within a group is as good as the true one: the group counts as a class
// with its multiplicity, never as one key.
Read read_linked(const std::string& conninfo, const std::string& table) {
  pqxx::connection c(conninfo);
  pqxx::nontransaction tx(c);
  std::map<long, std::vector<std::string>> groups;
  for (const auto& row : tx.exec(std::string("SELECT ref, ") + kQis + " FROM " + table))
    groups[row[0].as<long>()].push_back(tuple_of(row));
  Read out;
  for (auto& [ref, tuples] : groups) {
    REQUIRE(tuples.size() < 1000);
    std::sort(tuples.begin(), tuples.end());
    for (size_t i = 0; i < tuples.size(); ++i) out[ref * 1000 + static_cast<long>(i)] = tuples[i];
  }
  return out;
}

bool all_masked(const std::string& tuple) {
  return tuple.find_first_not_of("\x01\x1f") == std::string::npos;
}

struct Classes {
  long rows = 0;
  long rows_below_k = 0;
  long classes_below_k = 0;
};

// Whether a released tuple can be what a row with these raw values shows:
// every value it releases is the row's.
bool consistent(const std::string& released, const std::string& raw) {
  std::stringstream a(released), b(raw);
  for (std::string x, y; std::getline(a, x, '\x1f') && std::getline(b, y, '\x1f');)
    if (x != "\x01" && x != y) return false;
  return true;
}

// Rows present in exactly the reads `in` (and in none of the others), grouped
// by the sequence of tuples they showed there. With `holds` (mode:
// materialized), a row whose last tuple masks every quasi-identifier may be
// held, and a held row is anyone's candidate there: counted for every class
// with the same earlier tuples as well. A held row as a target is where its
// values put it (the analyst knows its target's values): without the tree,
// this counter takes every row shown with a tuple its raw values (`truth`,
// id -> the raw tuple now) are consistent with, which may count more
// candidates than there are, never fewer.
Classes classes(const std::vector<Read>& reads, const std::vector<bool>& in, bool holds,
                const Read& truth) {
  std::map<std::string, long> count, wildcard;
  std::map<std::string, std::map<std::string, long>> shown_by_head;  // head -> last -> rows
  struct Member {
    long id;
    std::string head, sig;  // earlier tuples; all tuples
    bool masked;            // the last tuple masks everything
  };
  std::vector<Member> members;
  for (const auto& [id, last] : reads.back()) {
    bool match = true;
    std::string head;
    for (size_t r = 0; r + 1 < reads.size() && match; ++r) {
      const auto it = reads[r].find(id);
      match = (it != reads[r].end()) == in[r];
      if (it != reads[r].end()) head += it->second + "|";
    }
    if (!match || !in.back()) continue;
    Member m{id, head, head + last, holds && all_masked(last)};
    ++count[m.sig];
    if (m.masked)
      ++wildcard[head];
    else
      ++shown_by_head[head][last];
    members.push_back(std::move(m));
  }
  Classes out;
  std::set<std::string> below;
  for (const auto& m : members) {
    ++out.rows;
    long c = count[m.sig] + (m.masked ? 0 : wildcard[m.head]);
    if (m.masked && truth.count(m.id)) {
      c = wildcard[m.head];
      for (const auto& [last, n] : shown_by_head[m.head])
        if (consistent(last, truth.at(m.id))) c += n;
    }
    if (c >= kK) continue;
    ++out.rows_below_k;
    below.insert(m.sig);
  }
  out.classes_below_k = static_cast<long>(below.size());
  return out;
}

std::string insert_sql(const std::string& table, int n) {
  return "INSERT INTO " + table +
         " (id, sex, age, race, \"marital-status\", education, \"native-country\", workclass, "
         "occupation, \"salary-class\") SELECT (SELECT max(id) FROM " +
         table +
         ") + g, (array_agg(sex))[1], (array_agg(age))[2], (array_agg(race))[3], "
         "(array_agg(\"marital-status\"))[1], (array_agg(education))[2], "
         "(array_agg(\"native-country\"))[1], (array_agg(workclass))[3], "
         "(array_agg(occupation))[2], (array_agg(\"salary-class\"))[1] "
         "FROM generate_series(1, " +
         std::to_string(n) + ") g CROSS JOIN LATERAL (SELECT * FROM " + table +
         " WHERE id % 997 = (g * 31 + 5) % 997 AND g > 0 LIMIT 3) s GROUP BY g";
}

// One field of the last VERIFY HISTORY row, by column name.
std::string verify_field(const std::string& out, const std::string& header,
                         const std::string& column) {
  std::vector<std::string> names, values;
  std::stringstream h(header), v(out.substr(0, out.find('\n')));
  for (std::string f; std::getline(h, f, '|');) names.push_back(f);
  for (std::string f; std::getline(v, f, '|');) values.push_back(f);
  for (size_t i = 0; i < names.size() && i < values.size(); ++i)
    if (names[i] == column) return values[i];
  FAIL("no column " << column << " in " << header);
  return "";
}

// kanon in front of the shared sandbox, protecting `table` (k = 5, ADULT's
// eight quasi-identifiers) in `mode`, with the admin console.
struct Protected {
  std::string policy_path;
  std::unique_ptr<KanonProxy> proxy;

  Protected(const std::string& table, const std::string& mode)
      : policy_path(scratch_path("kanon-linking-policy.yaml")) {
    std::ofstream(policy_path) << "tables:\n  - table: " << table << "\n    k: " << kK
                               << "\n    mode: " << mode
                               << "\n    quasi_identifiers: [sex, age, race, marital-status, "
                                  "education, native-country, workclass, occupation]\n"
                                  "    max_nodes: 8192\n    exempt: [postgres]\n";
    proxy = std::make_unique<KanonProxy>(
        PgSandbox::shared().port(),
        "admin: {database: kanon, users: [postgres]}\npolicies: [" + policy_path + "]\n");
  }
  ~Protected() { std::filesystem::remove(policy_path); }

  // psql -A on the console (header, rows, footer); fails the test on error.
  std::string console(const std::string& command) const {
    const auto r = run_command(
        {"psql", "-X", "-A", "-d", proxy->conninfo("postgres", "kanon"), "-c", command});
    REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.err);
    return r.out;
  }
};

}  // namespace

TEST_CASE("linked reads through kanon: inserts, a delete, an update, counted by the analyst") {
  struct Change {
    const char* what;
    int inserted;        // rows
    std::string change;  // more SQL ({t}: the table)
    bool deletes, updates;
  };
  const std::vector<Change> changes = {
      {"insert 0.1%", 30, "", false, false},
      {"insert 1%", 302, "", false, false},
      {"insert 5%", 1508, "", false, false},
      {"delete 1%", 0, "DELETE FROM {t} WHERE id % 100 = 7", true, false},
      {"update 1%", 0,
       "UPDATE {t} SET age = age + 1 WHERE id % 200 = 3; "
       "UPDATE {t} SET occupation = 'Sales' WHERE id % 200 = 5",
       false, true},
  };
  auto& pg = PgSandbox::shared();
  for (const std::string mode : {"inline", "materialized"}) {
    for (const auto& change : changes) {
      CAPTURE(mode);
      CAPTURE(change.what);
      // A table of its own (and so a history of its own) per change.
      const std::string table =
          "public.adult_link_" + mode + "_" + std::to_string(&change - changes.data());
      pg.psql("DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table +
              " AS SELECT * FROM public.adult; ALTER TABLE " + table +
              " ADD PRIMARY KEY (id); GRANT SELECT ON " + table + " TO analyst");
      const Protected kanon(table, mode);
      const auto console = [&](const std::string& command) { return kanon.console(command); };
      auto& proxy = *kanon.proxy;
      // The first build (a baseline) is done once a REFRESH returns.
      console("REFRESH " + table);
      const std::string analyst = proxy.conninfo("analyst");
      std::vector<Read> reads{read_all(analyst, table)};
      REQUIRE(reads[0].size() > 30000);
      if (change.inserted > 0) pg.psql(insert_sql(table, change.inserted));
      std::string sql = change.change;
      for (size_t at; (at = sql.find("{t}")) != std::string::npos;) sql.replace(at, 3, table);
      if (!sql.empty()) pg.psql(sql);
      // A live mode shows the change at once: the analyst reads it before
      // the refresh too.
      if (mode == "inline") reads.push_back(read_all(analyst, table));
      console("REFRESH " + table);
      reads.push_back(read_all(analyst, table));
      const bool holds = mode == "materialized";
      const Read truth = read_all(pg.conninfo("postgres"), table);  // raw: no kanon

      // Rows there throughout: present in every read.
      const Classes stayed = classes(reads, std::vector<bool>(reads.size(), true), holds, truth);
      // New rows: absent from the first read only.
      std::vector<bool> later(reads.size(), true);
      later[0] = false;
      const Classes fresh = classes(reads, later, holds, truth);
      CHECK(fresh.rows == change.inserted);

      const std::string verify = console("VERIFY HISTORY " + table);
      const std::string header = verify.substr(0, verify.find('\n'));
      const std::string row = verify.substr(verify.find('\n') + 1);
      CAPTURE(verify);
      const auto field = [&](const char* column) {
        return std::stol(verify_field(row, header, column));
      };
      // Nothing below k that kanon should have prevented; the rest is
      // reported, and the analyst's count is kanon's.
      CHECK(field("rows_below_k") == 0);
      CHECK(stayed.rows_below_k ==
            field("rows_below_k_through_deletions") + field("rows_below_k_through_updates"));
      CHECK(fresh.rows_below_k == field("rows_below_k_arrived_late"));
      if (!change.deletes) CHECK(field("rows_below_k_through_deletions") == 0);
      if (change.deletes) CHECK(field("rows_below_k_through_deletions") > 0);
      if (mode == "inline") {
        // Shown under the old tree before the refresh.
        if (change.inserted > 0) CHECK(fresh.rows_below_k > 0);
        if (change.updates) CHECK(field("rows_below_k_through_updates") > 0);
      } else {
        // Held: new rows until k arrived together, updated rows' helpers.
        CHECK(fresh.rows_below_k == 0);
        CHECK(field("rows_below_k_through_updates") == 0);
        if (!change.deletes) CHECK(stayed.rows_below_k == 0);
      }
      if (!change.deletes && !change.updates) {
        CHECK(stayed.rows_below_k == 0);
        CHECK(stayed.classes_below_k == 0);
      }
      MESSAGE(mode << ", " << std::string(change.what) << ": " << stayed.rows
                   << " rows there throughout, " << stayed.rows_below_k << " below k; "
                   << fresh.rows << " new rows, " << fresh.rows_below_k << " below k ("
                   << fresh.classes_below_k << " classes)");
      pg.psql("DROP TABLE " + table + " CASCADE");
    }
  }
}

TEST_CASE("ADULT without a key, as published: built, served and refreshed in every mode") {
  // Its only other column, salary-class, holds two values: rows are told
  // apart by it and the quasi-identifiers (docs/policy.md).
  auto& pg = PgSandbox::shared();
  for (const std::string mode : {"inline", "materialized", "view"}) {
    CAPTURE(mode);
    const std::string table = "public.adult_keyless_" + mode;
    pg.psql("DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table +
            " AS SELECT sex, age, race, \"marital-status\", education, \"native-country\", "
            "workclass, occupation, \"salary-class\" FROM public.adult; GRANT SELECT ON " +
            table + " TO analyst");
    const Protected kanon(table, mode);
    const auto console = [&](const std::string& command) { return kanon.console(command); };
    auto& proxy = *kanon.proxy;
    const std::string built = console("REFRESH " + table);
    CAPTURE(built);
    const std::string policies = console("SHOW POLICIES");
    CAPTURE(policies);
    CHECK(policies.find("non-quasi-identifier columns (salary-class), shared by several rows") !=
          std::string::npos);
    pqxx::connection analyst(proxy.conninfo("analyst"));
    const auto count = [&](const std::string& sql) {
      pqxx::nontransaction tx(analyst);
      return tx.exec(sql)[0][0].as<long>();
    };
    const long rows = count("SELECT count(*) FROM " + table);
    CHECK(rows > 30000);
    // Masked: fewer distinct ages than the table holds, and no cohort of
    // released ages smaller than k.
    CHECK(count("SELECT count(DISTINCT age) FROM " + table) <
          std::stol(pg.psql("SELECT count(DISTINCT age) FROM " + table)));
    CHECK(count("SELECT coalesce(min(n), 0) FROM (SELECT count(*) AS n FROM " + table +
                " GROUP BY sex, age, race, \"marital-status\", education, \"native-country\", "
                "workclass, occupation) c") >= kK);
    // The BI workload (bench/proxy_masked.sh) runs on it unchanged.
    for (const std::string q :
         {"SELECT occupation, sex, count(*) FROM {t} GROUP BY occupation, sex",
          "SELECT education, count(*) FROM {t} GROUP BY education",
          "SELECT count(*) FROM {t} WHERE age = 39",
          "SELECT count(DISTINCT \"native-country\") FROM {t}",
          "SELECT a.workclass, g.grp, count(*) FROM {t} a JOIN (SELECT DISTINCT occupation, "
          "length(occupation) % 3 AS grp FROM public.adult) g USING (occupation) GROUP BY 1, 2",
          "SELECT race, avg(age), count(*) FROM {t} GROUP BY race",
          "SELECT * FROM {t} LIMIT 1000"}) {
      std::string sql = q;
      sql.replace(sql.find("{t}"), 3, table);
      CAPTURE(sql);
      pqxx::nontransaction tx(analyst);
      CHECK(tx.exec(sql).size() > 0);
    }
    // 1% duplicates of existing rows, and a refresh: still served; nothing
    // below k that kanon should have prevented, nothing deleted.
    pg.psql("INSERT INTO " + table + " SELECT * FROM " + table + " LIMIT 302");
    console("REFRESH " + table);
    CHECK(count("SELECT count(*) FROM " + table) == rows + 302);
    const std::string verify = console("VERIFY HISTORY " + table);
    CAPTURE(verify);
    const std::string header = verify.substr(0, verify.find('\n'));
    const std::string row = verify.substr(verify.find('\n') + 1);
    CHECK(verify_field(row, header, "rows_below_k") == "0");
    CHECK(verify_field(row, header, "rows_below_k_through_deletions") == "0");
    CHECK(std::stol(verify_field(row, header, "linked_rows")) +
              std::stol(verify_field(row, header, "new_rows")) ==
          rows + 302);
    if (mode == "materialized") CHECK(verify_field(row, header, "verdict") == "ok");
    pg.psql("DROP TABLE " + table + " CASCADE");
  }
}

TEST_CASE("ADULT without a key, linked through a near-unique column: counted with multiplicities") {
  // `ref` is unique but for 1% of the rows, which appear twice (whole-row
  // duplicates). The analyst links its reads by ref; kanon tells rows apart
  // by ref, salary-class, the quasi-identifiers and a number among equal
  // rows. After 1% new rows (new refs) and a REFRESH, the analyst's count
  // over linked groups finds no row there throughout below k, and counts
  // new rows below k as VERIFY HISTORY does.
  auto& pg = PgSandbox::shared();
  for (const std::string mode : {"inline", "materialized"}) {
    CAPTURE(mode);
    const std::string table = "public.adult_ref_" + mode;
    pg.psql("DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table +
            " AS SELECT id AS ref, sex, age, race, \"marital-status\", education, "
            "\"native-country\", workclass, occupation, \"salary-class\" FROM public.adult; "
            "INSERT INTO " +
            table + " SELECT * FROM " + table + " WHERE ref % 100 = 42; GRANT SELECT ON " + table +
            " TO analyst");
    const Protected kanon(table, mode);
    const std::string built = kanon.console("REFRESH " + table);
    CAPTURE(built);
    CHECK(kanon.console("SHOW POLICIES").find("shared by several rows") != std::string::npos);
    const std::string analyst = kanon.proxy->conninfo("analyst");
    std::vector<Read> reads{read_linked(analyst, table)};
    REQUIRE(reads[0].size() > 30000);
    // 1% new rows: copies of existing rows' values under new refs.
    pg.psql("INSERT INTO " + table +
            " SELECT ref + 1000000, sex, age, race, \"marital-status\", "
            "education, \"native-country\", workclass, occupation, \"salary-class\" FROM " +
            table + " WHERE ref % 100 = 17");
    const long inserted =
        std::stol(pg.psql("SELECT count(*) FROM " + table + " WHERE ref >= 1000000"));
    if (mode == "inline") reads.push_back(read_linked(analyst, table));
    kanon.console("REFRESH " + table);
    reads.push_back(read_linked(analyst, table));
    const Read truth = read_linked(pg.conninfo("postgres"), table);
    const bool holds = mode == "materialized";
    const Classes stayed = classes(reads, std::vector<bool>(reads.size(), true), holds, truth);
    std::vector<bool> later(reads.size(), true);
    later[0] = false;
    const Classes fresh = classes(reads, later, holds, truth);
    CHECK(fresh.rows == inserted);
    CHECK(stayed.rows > 30000);
    CHECK(stayed.rows_below_k == 0);
    CHECK(stayed.classes_below_k == 0);
    const std::string verify = kanon.console("VERIFY HISTORY " + table);
    CAPTURE(verify);
    const std::string header = verify.substr(0, verify.find('\n'));
    const std::string row = verify.substr(verify.find('\n') + 1);
    CHECK(verify_field(row, header, "rows_below_k") == "0");
    CHECK(std::stol(verify_field(row, header, "rows_below_k_arrived_late")) == fresh.rows_below_k);
    if (holds) CHECK(fresh.rows_below_k == 0);
    MESSAGE(mode << ": " << stayed.rows << " rows there throughout, " << fresh.rows << " new rows, "
                 << fresh.rows_below_k << " below k");
    pg.psql("DROP TABLE " + table + " CASCADE");
  }
}
