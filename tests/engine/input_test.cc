// Dictionaries, CSV, hierarchy validation (every error case), functional
// specs, data coverage.
// GCC 12 reports a false -Wrestrict inside libstdc++ string code at -O3 here.
#pragma GCC diagnostic ignored "-Wrestrict"
#include <doctest/doctest.h>

#include <sstream>

#include "engine/csv.h"
#include "engine/dataset.h"
#include "engine/dictionary.h"
#include "engine/hierarchy.h"
#include "engine/hierarchy_spec.h"

namespace kanon::engine {
namespace {

HierarchyTable table(std::vector<std::vector<std::string>> rows) {
  HierarchyTable t;
  t.source = "h.csv";
  t.rows = std::move(rows);
  for (size_t i = 0; i < t.rows.size(); ++i) t.line_numbers.push_back(i + 1);
  return t;
}

std::string error_of(const HierarchyTable& t) {
  try {
    t.validate();
  } catch (const HierarchyError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("dictionary encodes in order of first appearance") {
  Dictionary d;
  CHECK(d.encode("b") == 0);
  CHECK(d.encode("a") == 1);
  CHECK(d.encode("b") == 0);
  CHECK(d.size() == 2);
  CHECK(d.decode(1) == "a");
  CHECK(d.find("a") == 1u);
  CHECK_FALSE(d.find("c").has_value());
}

TEST_CASE("csv: delimiter, quotes, ragged rows") {
  std::istringstream in("x,y\n1,\"a,b\"\n\"q\"\"t\",2\n");
  const CsvTable t = parse_csv(in, ',', "t.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0][1] == "a,b");
  CHECK(t.rows[1][0] == "q\"t");
  std::istringstream bad("x;y\n1;2;3\n");
  CHECK_THROWS_WITH_AS(parse_csv(bad, ';', "b.csv"), doctest::Contains("b.csv:2"), CsvError);
}

TEST_CASE("csv: CsvError carries the source and the line") {
  std::istringstream bad("x;y\n\n1;2\n3;\"open\n");
  try {
    parse_csv(bad, ';', "c.csv");
    FAIL("expected a CsvError");
  } catch (const CsvError& e) {
    CHECK(e.source == "c.csv");
    CHECK(e.line == 4);
    CHECK(e.problem == "unterminated quoted field");
    CHECK(std::string(e.what()) == "c.csv:4: unterminated quoted field");
  }
  try {
    read_csv("/nonexistent/x.csv", ';');
    FAIL("expected a CsvError");
  } catch (const CsvError& e) {
    CHECK(e.line == 0);
    CHECK(std::string(e.what()) == "/nonexistent/x.csv: cannot open file");
  }
}

TEST_CASE("hierarchy validation errors name file, line and value") {
  CHECK(error_of(table({{"a", "x", "*"}, {"b", "x", "*"}})).empty());
  const auto heights = error_of(table({{"a", "x", "*"}, {"b", "*"}}));
  CHECK(heights.find("h.csv:2") != std::string::npos);
  CHECK(heights.find("heights must be equal") != std::string::npos);
  const auto dup = error_of(table({{"a", "x", "*"}, {"a", "x", "*"}}));
  CHECK(dup.find("duplicate value 'a'") != std::string::npos);
  const auto mono = error_of(table({{"a", "x", "p", "*"}, {"b", "x", "q", "*"}}));
  CHECK(mono.find("not monotonic") != std::string::npos);
  CHECK(mono.find("'x'") != std::string::npos);
  const auto top = error_of(table({{"a", "x"}, {"b", "y"}}));
  CHECK(top.find("single top value") != std::string::npos);
  CHECK(error_of(HierarchyTable{}).find("no rows") != std::string::npos);
}

TEST_CASE("data values must be covered by the hierarchy") {
  CsvTable t;
  t.source = "d.csv";
  t.header = {"x"};
  t.rows = {{"a"}, {"zz"}};
  t.line_numbers = {2, 3};
  const HierarchyTable h = table({{"a", "*"}, {"b", "*"}});
  std::vector<AttributeSpec> specs{
      {"x", AttributeRole::kQuasiIdentifier, [h](const auto&) { return h; }}};
  CHECK_THROWS_WITH_AS(encode_dataset(t, specs), doctest::Contains("d.csv:3: value 'zz'"),
                       DataError);
  t.rows[1][0] = "b";
  const Dataset d = encode_dataset(t, specs);
  CHECK(d.qis[0].data_values == 2);
  CHECK(d.qis[0].domain_size == 2);
  CHECK(d.qis[0].height == 2);
  CHECK(d.qis[0].maps[1][0] == d.qis[0].maps[1][1]);
  std::vector<AttributeSpec> unknown{{"nope", AttributeRole::kSensitive, nullptr}};
  CHECK_THROWS_AS(encode_dataset(t, unknown), DataError);
}

TEST_CASE("functional specs expand to valid tables") {
  const auto iv = expand_hierarchy_spec(YAML::Load("{type: intervals, min: 0, widths: [5, 10]}"),
                                        {"3", "7", "12"}, "s");
  CHECK(iv.rows[0] == std::vector<std::string>{"3", "[0, 5)", "[0, 10)", "*"});
  CHECK(iv.rows[2][2] == "[10, 20)");
  CHECK_THROWS_WITH_AS(
      expand_hierarchy_spec(YAML::Load("{type: intervals, widths: [5, 7]}"), {"1"}, "s"),
      doctest::Contains("not a multiple"), HierarchyError);
  CHECK_THROWS_WITH_AS(
      expand_hierarchy_spec(YAML::Load("{type: intervals, widths: [5]}"), {"x1"}, "s"),
      doctest::Contains("'x1' is not a number"), HierarchyError);
  const auto dt = expand_hierarchy_spec(YAML::Load("{type: dates}"), {"2021-03-04"}, "s");
  CHECK(dt.rows[0] == std::vector<std::string>{"2021-03-04", "2021-03", "2021", "2020s", "*"});
  CHECK_THROWS_AS(expand_hierarchy_spec(YAML::Load("{type: dates}"), {"03/04/2021"}, "s"),
                  HierarchyError);
  const auto mk = expand_hierarchy_spec(YAML::Load("{type: mask, levels: [1, 2]}"), {"81667"}, "s");
  CHECK(mk.rows[0] == std::vector<std::string>{"81667", "8166*", "816**", "*"});
  const auto ord = expand_hierarchy_spec(
      YAML::Load("{type: ordered, order: [a, b, c, d], sizes: [2, 4]}"), {"c", "a"}, "s");
  CHECK(ord.rows[0] == std::vector<std::string>{"c", "c..d", "a..d", "*"});
  CHECK_THROWS_WITH_AS(
      expand_hierarchy_spec(YAML::Load("{type: ordered, order: [a], sizes: [2]}"), {"z"}, "s"),
      doctest::Contains("'z'"), HierarchyError);
  CHECK_THROWS_WITH_AS(expand_hierarchy_spec(YAML::Load("{type: wat}"), {"z"}, "s"),
                       doctest::Contains("unknown hierarchy type"), HierarchyError);
}

}  // namespace
}  // namespace kanon::engine
