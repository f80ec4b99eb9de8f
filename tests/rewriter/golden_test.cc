// The golden cases (tests/rewriter/golden/*.sqltest) through the Rewriter
// with hand-written masks: every input must give exactly the expected text,
// pass verdict or denial (rule and object).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <random>

#include "policy/sql_text.h"
#include "rewriter/rewriter.h"
#include "tests/rewriter/golden_env.h"
#include "tests/rewriter/golden_file.h"
#include "tests/rewriter/shape_variants.h"

using kanon::rewriter::PlanContext;
using kanon::rewriter::Rewriter;
using kanon::rewriter::Verdict;
using namespace kanon::testing;

namespace {

// KANON_GOLDEN_DUMP=path writes every case with the result it got, in the
// file format (masks folded back into @MASKS), for reviewing new cases.
std::string fold_masks(std::string sql, const GoldenEnv& env) {
  for (size_t at = sql.find(kFence); at != std::string::npos; at = sql.find(kFence, at))
    sql.replace(at, kFence.size(), "@FENCE");
  for (const auto& [name, t] : env.snapshot.tables) {
    const std::string masks = t->masks.select_list();
    for (size_t at = sql.find(masks); at != std::string::npos; at = sql.find(masks, at))
      sql.replace(at, masks.size(), "@MASKS(" + name + ")");
  }
  // A list of some columns (those a statement names), in table order: of the
  // table whose columns cover the list up to its FROM, the one read there
  // when several do (a partition reads its parent's masks).
  const std::string open = "(SELECT ";
  for (size_t at = sql.find(open); at != std::string::npos; at = sql.find(open, at + 1)) {
    std::string best_name, best_columns;
    size_t best_end = 0;
    bool best_read = false;
    for (const auto& [name, t] : env.snapshot.tables) {
      size_t p = at + open.size();
      std::string columns;
      for (const auto& m : t->masks.columns) {
        const std::string item = m.select_item();
        const std::string sep = columns.empty() ? "" : ", ";
        if (sql.compare(p, sep.size() + item.size(), sep + item) != 0) continue;
        p += sep.size() + item.size();
        columns += (columns.empty() ? "" : ", ") + m.column;
      }
      if (columns.empty() ||
          (sql.compare(p, 6, " FROM ") != 0 && sql.compare(p, 14, ", @FENCE FROM ") != 0))
        continue;
      const size_t close = sql.find(')', p);
      const bool read = sql.substr(p, close - p)
                            .find(kanon::policy::qualified_name(
                                t->policy.schema, t->policy.table)) != std::string::npos;
      if (p > best_end || (p == best_end && read && !best_read)) {
        best_name = name;
        best_columns = columns;
        best_end = p;
        best_read = read;
      }
    }
    if (best_end)
      sql.replace(at + open.size(), best_end - at - open.size(),
                  "@MASKS(" + best_name + ": " + best_columns + ")");
  }
  return sql;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kRewritten:
      return "rewritten";
    case Verdict::kDenied:
      return "denied";
    case Verdict::kLookup:
      return "lookup";
  }
  return "?";
}

}  // namespace

TEST_CASE("golden cases") {
  const auto cases = load_golden_cases(golden_dir());
  CHECK(cases.size() >= 150);
  std::map<std::string, GoldenEnv> envs;
  size_t checked = 0;
  const char* dump_path = std::getenv("KANON_GOLDEN_DUMP");
  std::ofstream dump;
  if (dump_path) dump.open(dump_path);
  for (const auto& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.line);
    CAPTURE(c.name);
    CAPTURE(c.input);
    if (!envs.count(c.env)) envs.emplace(c.env, make_unit_env(c.env));
    const GoldenEnv& env = envs.at(c.env);
    Rewriter rw(0);
    rw.set_listed_tables(env.listed);
    const auto r = rw.rewrite(c.input, env.snapshot, PlanContext{c.search_path, false});
    CAPTURE(r.sql);
    CAPTURE(r.message);
    if (dump_path) {
      dump << "#FILE " << c.file << "\n";
      dump << "=== " << c.name << "\n";
      if (c.env != "default") dump << "--- env: " << c.env << "\n";
      if (c.search_path != "\"$user\", public")
        dump << "--- search_path: " << c.search_path << "\n";
      if (!c.exec) dump << "--- exec: no\n";
      dump << c.input
           << "\n--- expect: " << (r.sqlstate == "42601" ? "syntax" : verdict_name(r.verdict));
      if (r.verdict == Verdict::kDenied)
        dump << (r.sqlstate == "42601" ? std::string() : " " + r.rule + " " + r.object);
      dump << "\n";
      if (r.verdict == Verdict::kRewritten) dump << fold_masks(r.sql, env) << "\n";
      dump << "\n";
    }
    if (c.expect == "syntax") {
      CHECK(r.verdict == Verdict::kDenied);
      CHECK(r.sqlstate == "42601");
    } else if (c.expect == "denied") {
      CHECK(std::string(verdict_name(r.verdict)) == "denied");
      CHECK(r.sqlstate == "42501");
      CHECK(r.rule == c.rule);
      CHECK(r.object == c.object);
      CHECK(r.message.find(c.rule) != std::string::npos);
    } else {
      CHECK(std::string(verdict_name(r.verdict)) == c.expect);
      if (c.expect == "rewritten") {
        const std::string want =
            expand_macros(c.output, [&](const std::string& kind, const std::string& table) {
              return env_macro(env, kind, table);
            });
        CHECK(r.sql == want);
      }
    }
    ++checked;
  }
  MESSAGE(checked << " golden cases checked");
}

// Each case again with other integer constants, through one caching
// Rewriter that decided the case as written first: every answer must be the
// one a fresh Rewriter gives that text. The cache shares a decision among
// the texts of one shape (rewriter/literal_shape.h) only where it holds for
// every constant: a masked read's restriction filter copies its constant
// (`age = 39`), so those are decided one by one.
TEST_CASE("golden cases with other integer constants: every answer is the text's own") {
  const auto cases = load_golden_cases(golden_dir());
  std::map<std::string, GoldenEnv> envs;
  std::mt19937 rng(20261129);
  size_t variants = 0, shared = 0;
  for (const auto& c : cases) {
    if (!envs.count(c.env)) envs.emplace(c.env, make_unit_env(c.env));
    const GoldenEnv& env = envs.at(c.env);
    const PlanContext context{c.search_path, false};
    Rewriter cached(64);
    cached.set_listed_tables(env.listed);
    cached.rewrite(c.input, env.snapshot, context);
    for (int round = 0; round < 4; ++round) {
      const std::string variant = with_other_constants(c.input, rng);
      if (variant == c.input) break;
      CAPTURE(c.name);
      CAPTURE(variant);
      Rewriter fresh(0);
      fresh.set_listed_tables(env.listed);
      const auto want = fresh.rewrite(variant, env.snapshot, context);
      const auto got = cached.rewrite(variant, env.snapshot, context);
      CHECK(result_difference(got, want) == "");
      ++variants;
      if (got.cache_hit) ++shared;
    }
  }
  MESSAGE(variants << " variants, " << shared << " decided by their shape");
  CHECK(variants >= 100);
  CHECK(shared >= 15);
}
