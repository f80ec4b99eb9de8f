// Everything kanon writes into a restricted statement is schema-qualified:
// the masks see raw values, so no operator, function, cast or relation in
// them may be one a session can choose through its search_path (an `=` in a
// schema of the analyst's, put first by SET search_path, would receive every
// raw value). Every mask form is generated here from policies with columns
// of several types and parsed; the checker itself is shown to catch each
// unqualified construct.
#include "tests/rewriter/qualification.h"

#include <doctest/doctest.h>

#include <random>

#include "policy/disclosure_tree.h"
#include "policy/table_masks.h"
#include "rewriter/rewriter.h"
#include "tests/rewriter/golden_env.h"

using namespace kanon;
using namespace kanon::policy;
using namespace kanon::catalog;

namespace {

// Columns as read_table_info reads them from the catalog.
TableInfo sample_info() {
  TableInfo info{"public", "t", {}, {}};
  const auto add = [&](std::string name, std::string type, std::string full, std::string sql,
                       std::string sql_full, std::string eq_schema) {
    ColumnInfo c{std::move(name), std::move(type), std::move(full)};
    c.sql_type = std::move(sql);
    c.sql_full_type = std::move(sql_full);
    c.equality = "OPERATOR(" + eq_schema + ".=)";
    info.columns.push_back(std::move(c));
  };
  add("id", "integer", "integer", "pg_catalog.int4", "pg_catalog.int4", "pg_catalog");
  add("name", "text", "text", "pg_catalog.text", "pg_catalog.text", "pg_catalog");
  add("ssn", "character varying", "character varying(11)", "pg_catalog.\"varchar\"",
      "pg_catalog.\"varchar\"(11)", "pg_catalog");
  add("town", "text", "text", "pg_catalog.text", "pg_catalog.text", "pg_catalog");
  add("age", "integer", "integer", "pg_catalog.int4", "pg_catalog.int4", "pg_catalog");
  add("mood", "mood", "mood", "public.mood", "public.mood", "pg_catalog");
  add("tags", "text[]", "text[]", "pg_catalog.text[]", "pg_catalog.text[]", "pg_catalog");
  add("code", "citext", "citext", "public.citext", "public.citext", "public");
  return info;
}

TablePolicy sample_policy() {
  TablePolicy p;
  p.schema = "public";
  p.table = "t";
  p.quasi_identifiers = {"town", "age", "mood", "tags", "code"};
  p.quasi_identifier_refs.resize(p.quasi_identifiers.size());
  p.direct_identifiers = {{"name", std::nullopt, {}}, {"ssn", std::string("***-**-****"), {}}};
  return p;
}

// Random rows over small domains, so the trees hold `= ANY` runs, switch
// arms and nested tests on every attribute.
std::vector<ReleasePredicate> sample_predicates(uint32_t seed) {
  EncodedTable t({{"town", "text", {}},
                  {"age", "integer", {}},
                  {"mood", "mood", {}},
                  {"tags", "text[]", {}},
                  {"code", "citext", {}}},
                 std::nullopt);
  std::mt19937 rng(seed);
  const std::vector<std::string> towns = {"Zürich", "Genève", "O'Hara", "back\\slash", "Köln",
                                          "Bern",   "Basel",  "Chur",   "Sion",        "Zug"};
  const std::vector<std::string> moods = {"happy", "sad", "ok"};
  const std::vector<std::string> tags = {"{a}", "{b,c}", "{}"};
  std::vector<std::string> cells(5);
  for (int i = 0; i < 600; ++i) {
    cells[0] = towns[rng() % towns.size()];
    cells[1] = std::to_string(20 + rng() % 6);
    cells[2] = moods[rng() % moods.size()];
    cells[3] = tags[rng() % tags.size()];
    cells[4] = "c" + std::to_string(rng() % 4);
    std::vector<std::optional<std::string_view>> row(cells.begin(), cells.end());
    if (rng() % 17 == 0) row[0] = std::nullopt;
    t.add_row(row);
  }
  const auto tree = DisclosureTree::build(t, {.k = 4, .l = 0, .max_nodes = 4096});
  return compile_release_predicates(tree);
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST_CASE("qualification: the checker finds every name resolved through the search_path") {
  using testing::unqualified_names;
  CHECK(unqualified_names("SELECT 1 FROM public.t").empty());
  CHECK(unqualified_names("SELECT a OPERATOR(pg_catalog.=) 'x'::pg_catalog.text FROM public.t")
            .empty());
  CHECK(
      unqualified_names("SELECT NULL::integer, NULL::character varying(3) FROM public.t").empty());
  const std::vector<std::string> bad = {
      "SELECT a = 'x' FROM public.t",
      "SELECT a IN ('x', 'y') FROM public.t",
      "SELECT a = ANY ('{x}'::pg_catalog.text[]) FROM public.t",
      "SELECT a BETWEEN 1 AND 2 FROM public.t",
      "SELECT a IS DISTINCT FROM 'x' FROM public.t",
      "SELECT NULLIF(a, 'x') FROM public.t",
      "SELECT a LIKE 'x' FROM public.t",
      "SELECT CASE a WHEN 'x' THEN 1 END FROM public.t",
      "SELECT a = ANY (SELECT 'x') FROM public.t",
      "SELECT lower(a) FROM public.t",
      "SELECT a::text FROM public.t",
      "SELECT 1 FROM t",
  };
  for (const auto& sql : bad) {
    CAPTURE(sql);
    CHECK(!unqualified_names(sql).empty());
  }
}

TEST_CASE("qualification: every mask form is schema-qualified") {
  const TableInfo info = sample_info();
  const TablePolicy policy = sample_policy();
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const auto predicates = sample_predicates(seed);
    REQUIRE(predicates.size() == policy.quasi_identifiers.size());
    for (const PredicateForm form :
         {PredicateForm::kNestedCase, PredicateForm::kFlatCase, PredicateForm::kFlatValue,
          PredicateForm::kSwitchCase, PredicateForm::kCostBased}) {
      const TableMasks masks = build_masks(policy, info, predicates, form);
      const std::string sql = "SELECT " + masks.select_list() + " FROM public.t";
      CAPTURE(seed);
      CAPTURE(static_cast<int>(form));
      CAPTURE(sql);
      const auto found = testing::unqualified_names(sql);
      CHECK_MESSAGE(found.empty(), joined(found));
      // The operators are the qualified ones: pg_catalog's, and the citext
      // column's own schema's.
      CHECK(sql.find("OPERATOR(pg_catalog.=)") != std::string::npos);
      CHECK(sql.find("OPERATOR(public.=)") != std::string::npos);
      // ASCII only: kanon's text reads alike in every client encoding.
      CHECK(std::all_of(sql.begin(), sql.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
    }
  }
}

TEST_CASE("qualification: the rewriter's derived tables name the table by its schema") {
  const auto env = testing::make_unit_env("default");
  rewriter::Rewriter rw;
  rw.set_listed_tables(env.listed);
  rewriter::PlanContext ctx;
  ctx.search_path = "evil, pg_catalog, public";
  for (const std::string sql :
       {"SELECT * FROM people", "SELECT city FROM ONLY people p", "TABLE people",
        "COPY people (id, city) TO STDOUT", "SELECT * FROM public.people_archive"}) {
    const auto r = rw.rewrite(sql, env.snapshot, ctx);
    CAPTURE(sql);
    REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
    CHECK(r.sql.find(" \"public\".\"people") != std::string::npos);
    CHECK(r.sql.find("FROM people)") == std::string::npos);
  }
}
