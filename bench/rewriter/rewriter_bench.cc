// Rewriter benchmark (issue 5): latency of Rewriter::rewrite over a corpus of
// typical BI queries (0.2-4 KB) that reference protected tables — uncached
// (every call parses, plans and splices), cached, and pass-through statements
// — against references measured in the same run: libpg_query's own parse of
// the same text in its JSON form (what the rewriter uses) and in its protobuf
// form unpacked with protobuf-c (the alternative). Prints a table; never fails.
//
//   rewriter_bench [--seconds-per-row S] [--keep-heap] [--profile S]
//
// Each row gives wall-time percentiles and the thread's CPU time per call:
// on a shared machine the wall p99 is mostly preemption, the CPU p99 is not.
#include <fmt/format.h>
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench/rewriter/bi_corpus.h"
#include "policy/encoded_table.h"
#include "policy/table_snapshot.h"
#include "rewriter/catalog_guard.h"
#include "rewriter/rewriter.h"
#include "rewriter/sql_parser.h"

using namespace kanon;
using kanon::bench::bi_corpus;
using Clock = std::chrono::steady_clock;

namespace {

// The demo's people table with masks compiled from the seed rows (k=2), as
// the proxy would hold them.
std::shared_ptr<policy::TableSnapshot> people_snapshot() {
  policy::TablePolicy p;
  p.schema = "public";
  p.table = "people";
  p.k = 2;
  p.quasi_identifiers = {"occupation", "city", "state"};
  p.quasi_identifier_refs.resize(3);
  p.direct_identifiers = {{"name", std::nullopt, {}}, {"ssn", std::string("***"), {}}};
  policy::TableInfo info{"public", "people", {}, {}};
  for (const char* c : {"id", "name", "ssn", "occupation", "city", "state", "diagnosis"})
    info.columns.push_back(
        {c, std::strcmp(c, "id") ? "text" : "integer", std::strcmp(c, "id") ? "text" : "integer"});
  policy::EncodedTable t({{"occupation", "text", {}}, {"city", "text", {}}, {"state", "text", {}}},
                         std::nullopt);
  const std::vector<std::vector<std::optional<std::string_view>>> rows = {
      {"Lawyer", "Washington", "DC"},  {"Lawyer", "Washington", "DC"},
      {"Lawyer", "Hamlet", "OH"},      {"Accountant", "Hamlet", "OH"},
      {"Farmer", "Hamlet", "OH"},      {"Farmer", "Hamlet", "OH"},
      {"Lawyer", "Columbus", "OH"},    {"Accountant", "Withamsville", "OH"},
      {"Accountant", "Whately", "MA"}, {"Accountant", "College Park", "MD"},
      {"Accountant", "Bellevue", "KY"}};
  for (const auto& r : rows) t.add_row(r);
  return policy::build_from_table(p, info, t);
}

// ADULT's columns with hand-written masks of realistic length (~1.5 KB).
std::shared_ptr<policy::TableSnapshot> adult_snapshot() {
  auto s = std::make_shared<policy::TableSnapshot>();
  s->info = {"public", "adult", {}, {}};
  const std::vector<std::string> cols = {"id",
                                         "sex",
                                         "age",
                                         "race",
                                         "marital-status",
                                         "education",
                                         "native-country",
                                         "workclass",
                                         "occupation",
                                         "salary-class"};
  for (const auto& c : cols) {
    const std::string q = "\"" + c + "\"";
    std::string expr = q;
    if (c != "id" && c != "salary-class")
      expr =
          "CASE WHEN \"sex\" = 'Male' AND \"race\" = ANY ('{\"White\",\"Black\"}'::text[]) AND "
          "\"age\" = ANY ('{\"37\",\"36\",\"38\",\"50\",\"34\"}'::integer[]) THEN " +
          q + " END";
    s->info.columns.push_back({c, c == "age" || c == "id" ? "integer" : "text", ""});
    s->masks.columns.push_back({c, "", expr, policy::ColumnMask::Role::kOther});
  }
  return s;
}

std::vector<std::string> pass_corpus() {
  return {"SELECT 1",
          "BEGIN",
          "COMMIT",
          "SET extra_float_digits = 3",
          "SHOW transaction_isolation",
          "select current_schema()",
          "SELECT version()",
          "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = "
          "c.relnamespace WHERE n.nspname = 'public' AND c.relkind = ANY (ARRAY['r', 'p'])"};
}

struct Figures {
  double p50 = 0, p99 = 0;          // wall µs
  double cpu_p50 = 0, cpu_p99 = 0;  // the thread's CPU µs (preemption on a busy machine aside)
};

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Runs `fn` over the corpus round-robin for `seconds`, one timing per call.
Figures measure(const std::vector<std::string>& corpus, double seconds,
                const std::function<void(const std::string&)>& fn) {
  for (const auto& q : corpus) fn(q);  // warm-up
  std::vector<double> us, cpu;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  size_t i = 0;
  while (Clock::now() < end || us.size() < corpus.size() * 10) {
    const auto& q = corpus[i++ % corpus.size()];
    const double c0 = thread_cpu_us();
    const auto t0 = Clock::now();
    fn(q);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    cpu.push_back(thread_cpu_us() - c0);
  }
  std::sort(us.begin(), us.end());
  std::sort(cpu.begin(), cpu.end());
  const size_t p99 = std::min(us.size() - 1, us.size() * 99 / 100);
  return {us[us.size() / 2], us[p99], cpu[cpu.size() / 2], cpu[p99]};
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2.0;
  bool keep_heap = false;
  double profile = 0;  // > 0: only rewrite the largest BI statement, uncached, for so many seconds
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds-per-row" && i + 1 < argc) seconds = std::stod(argv[++i]);
    if (a == "--keep-heap") keep_heap = true;
    if (a == "--profile" && i + 1 < argc) profile = std::stod(argv[++i]);
  }
  fmt::print("load average at the start: {}\n", load_average());
  if (keep_heap) {
    // libpg_query allocates and frees its memory contexts on every parse;
    // with glibc's defaults large statements return the pages to the kernel
    // each time (brk/munmap). A process that keeps its heap avoids that.
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
  }

  store::PolicySnapshot snap;
  snap.version = 1;
  snap.tables["public.people"] = people_snapshot();
  snap.tables["public.adult"] = adult_snapshot();
  const rewriter::PlanContext session{"\"$user\", public", false};

  const auto bi = bi_corpus();
  const auto pass = pass_corpus();
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& q : bi) {
    lo = std::min(lo, q.size());
    hi = std::max(hi, q.size());
  }
  {
    rewriter::Rewriter check(0);
    for (const auto& q : bi)
      if (check.rewrite(q, snap, session).verdict != rewriter::Verdict::kRewritten)
        fmt::print(stderr, "corpus query not rewritten: {}\n", q.substr(0, 80));
    for (const auto& q : pass)
      if (check.rewrite(q, snap, session).verdict != rewriter::Verdict::kPass)
        fmt::print(stderr, "pass-through query not passed: {}\n", q);
  }

  rewriter::Rewriter uncached(0);
  if (profile > 0) {  // for perf record: no timing, no other work
    const std::string& q = *std::max_element(
        bi.begin(), bi.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
    const auto end = Clock::now() + std::chrono::duration<double>(profile);
    size_t n = 0;
    while (Clock::now() < end)
      for (int i = 0; i < 100; ++i, ++n) uncached.rewrite(q, snap, session);
    fmt::print("{} rewrites of the {}-byte statement\n", n, q.size());
    return 0;
  }
  rewriter::Rewriter cached(4096);
  struct Row {
    std::string what;
    Figures f;
    std::string target;
  };
  std::vector<Row> rows;
  rows.push_back({"reference: pg_query_parse (JSON), BI corpus",
                  measure(bi, seconds, [](const std::string& q) { rewriter::raw_parse_json(q); }),
                  ""});
  rows.push_back(
      {"reference: pg_query_parse_protobuf + unpack, BI corpus",
       measure(bi, seconds, [](const std::string& q) { rewriter::raw_parse_protobuf(q); }), ""});
  rows.push_back(
      {"rewrite, uncached, BI corpus",
       measure(bi, seconds, [&](const std::string& q) { uncached.rewrite(q, snap, session); }),
       "p50 <= 50, p99 <= 200"});
  rows.push_back(
      {"rewrite, cached, BI corpus",
       measure(bi, seconds, [&](const std::string& q) { cached.rewrite(q, snap, session); }),
       "<= 2"});
  rows.push_back({"reference: pg_query_parse (JSON), pass-through",
                  measure(pass, seconds, [](const std::string& q) { rewriter::raw_parse_json(q); }),
                  ""});
  rows.push_back(
      {"rewrite, uncached, pass-through",
       measure(pass, seconds, [&](const std::string& q) { uncached.rewrite(q, snap, session); }),
       "<= 5"});
  rows.push_back(
      {"rewrite, cached, pass-through",
       measure(pass, seconds, [&](const std::string& q) { cached.rewrite(q, snap, session); }),
       ""});
  // Statements that differ only in integer constants, as pgbench and ORMs
  // send them: each text new to the exact cache, its shape not
  // (rewriter/literal_shape.h). A pass, and a masked read of a key.
  std::vector<std::string> constants;
  for (int i = 0; i < 3000; ++i) {
    constants.push_back(fmt::format("SELECT abalance FROM pgbench_accounts WHERE aid = {};",
                                    (i * 7919) % 1000000 + 1));
    constants.push_back(fmt::format("SELECT id, city FROM people WHERE id = {}", i * 31 + 100001));
  }
  rows.push_back({"rewrite, uncached, integer constants",
                  measure(constants, seconds,
                          [&](const std::string& q) { uncached.rewrite(q, snap, session); }),
                  ""});
  rewriter::Rewriter shaped(4096);
  rows.push_back(
      {"rewrite, cached, integer constants (by shape)",
       measure(constants, seconds, [&](const std::string& q) { shaped.rewrite(q, snap, session); }),
       ""});
  // What the catalog guard adds to an uncached decision (rewriter/catalog_guard.h):
  // scanning the text and placing the guard in each statement's parse.
  const auto guard_work = [](const std::vector<std::string>& corpus) {
    std::vector<rewriter::ParseOutcome> parsed;
    for (const auto& q : corpus) parsed.push_back(rewriter::parse_sql(q));
    return [parsed = std::move(parsed), &corpus](const std::string& q) {
      const size_t i = static_cast<size_t>(&q - corpus.data());
      std::vector<rewriter::SqlToken> tokens;
      std::vector<rewriter::Edit> edits;
      rewriter::scan_tokens(q, tokens);
      for (const auto& st : parsed[i].statements)
        rewriter::place_catalog_guard(tokens, st, rewriter::GuardCall{42, false, false, ""}, edits);
    };
  };
  rows.push_back(
      {"catalog guard: scan + place, BI corpus", measure(bi, seconds, guard_work(bi)), "<= 10"});
  rows.push_back({"catalog guard: scan + place, pass-through",
                  measure(pass, seconds, guard_work(pass)), "<= 10"});

  fmt::print("BI corpus: {} queries, {}-{} bytes; pass-through: {} statements\n\n", bi.size(), lo,
             hi, pass.size());
  fmt::print("load average at the end: {}\n\n", load_average());
  fmt::print("| {:<55} | {:>9} | {:>9} | {:>9} | {:>9} | {:<22} |\n", "measurement", "p50 µs",
             "p99 µs", "cpu p50", "cpu p99", "target (µs)");
  fmt::print("|{:-<57}|{:-<11}|{:-<11}|{:-<11}|{:-<11}|{:-<24}|\n", "", "", "", "", "", "");
  for (const auto& r : rows)
    fmt::print("| {:<55} | {:>9.2f} | {:>9.2f} | {:>9.2f} | {:>9.2f} | {:<22} |\n", r.what, r.f.p50,
               r.f.p99, r.f.cpu_p50, r.f.cpu_p99, r.target);
  fmt::print(
      "\nratios (p50): uncached rewrite / JSON parse = {:.2f}; protobuf / JSON parse = {:.2f}\n",
      rows[2].f.p50 / rows[0].f.p50, rows[1].f.p50 / rows[0].f.p50);
  fmt::print(
      "\nper query (µs): bytes, JSON parse p50, parse_sql p50 (JSON parse + reading it), uncached "
      "rewrite p50 / p99 / cpu p99, rewritten bytes\n");
  for (const auto& q : bi) {
    const std::vector<std::string> one{q};
    const auto parse =
        measure(one, seconds / 10, [](const std::string& x) { rewriter::raw_parse_json(x); });
    const auto ours =
        measure(one, seconds / 10, [](const std::string& x) { rewriter::parse_sql(x); });
    const auto rw = measure(one, seconds / 10,
                            [&](const std::string& x) { uncached.rewrite(x, snap, session); });
    fmt::print("  {:>5} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>7}\n", q.size(), parse.p50,
               ours.p50, rw.p50, rw.p99, rw.cpu_p99, uncached.rewrite(q, snap, session).sql.size());
  }
  fmt::print("heap: {}\n", keep_heap ? "kept (--keep-heap)" : "glibc defaults");
  const auto stats = cached.cache_stats();
  fmt::print("cache: {} hits, {} misses, {} entries\n", stats.hits, stats.misses, stats.entries);
  return 0;
}
