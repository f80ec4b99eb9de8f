// The golden cases (tests/rewriter/golden/*.sqltest) through the Rewriter
// with hand-written masks: every input must give exactly the expected text,
// pass verdict or denial (rule and object).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "rewriter/rewriter.h"
#include "tests/rewriter/golden_env.h"
#include "tests/rewriter/golden_file.h"

using kanon::rewriter::PlanContext;
using kanon::rewriter::Rewriter;
using kanon::rewriter::Verdict;
using namespace kanon::testing;

namespace {

// KANON_GOLDEN_DUMP=path writes every case with the result it got, in the
// file format (masks folded back into @MASKS), for reviewing new cases.
std::string fold_masks(std::string sql, const GoldenEnv& env) {
  for (const auto& [name, t] : env.snapshot.tables) {
    const std::string masks = t->masks.select_list();
    for (size_t at = sql.find(masks); at != std::string::npos; at = sql.find(masks, at))
      sql.replace(at, masks.size(), "@MASKS(" + name + ")");
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
