// The export report's risk section from hand-made publications: population
// rows published through the chosen levels' value maps, unplaced rows,
// Mondrian's note, a population that lacks a published class.
#include "publish/export_risk.h"

#include <doctest/doctest.h>

using namespace kanon::publish;

namespace {

// Two quasi-identifiers: age at a middle level (30 and 35 -> "30-39",
// 41 -> "40-49"), sex at level 0 (kept as it is).
Publication two_levels() {
  Publication pub;
  Publication::ValueMap age;
  age.values = {{"30", "30-39"}, {"35", "30-39"}, {"41", "40-49"}};
  Publication::ValueMap sex;
  sex.identity = true;
  pub.value_maps = {age, sex};
  return pub;
}

ExportSettings with_population(double threshold) {
  ExportSettings s;
  s.risk_threshold = threshold;
  s.population_schema = "stats";
  s.population_table = "census";
  return s;
}

}  // namespace

TEST_CASE("population rows are published through the value maps and counted per class") {
  const PublishedClasses classes = {{{"30-39", "F"}, 2}, {{"40-49", "M"}, 3}};
  // 30/F x3 and 35/F x1 -> (30-39, F): F = 4; 41/M x3 -> (40-49, M): F = 3;
  // 41/F x5 is a class nobody was published in; 99/M x2 is not in the map.
  const PopulationCounts population = {
      {{"30", "F"}, 3}, {{"35", "F"}, 1}, {{"41", "M"}, 3}, {{"41", "F"}, 5}, {{"99", "M"}, 2}};
  const RiskReport r = risk_report(two_levels(), with_population(0.3), classes, &population);
  CHECK(r.population == "stats.census");
  CHECK(r.population_rows == 14);
  CHECK(r.population_unplaced == 2);
  CHECK(r.population_note.empty());
  REQUIRE(r.figures.journalist);
  // f = (2, 3), F = (4, 3), n = 5, J = 2.
  CHECK(r.figures.prosecutor.highest == doctest::Approx(0.5));
  CHECK(r.figures.prosecutor.records_above == 5);  // 1/2 and 1/3 > 0.3
  CHECK(r.figures.journalist->highest == doctest::Approx(1.0 / 3));
  CHECK(r.figures.journalist->records_above == 3);  // only F = 3
  // max(2/7, (2/4 + 3/3) / 5 = 0.3)
  CHECK(r.figures.journalist->average == doctest::Approx(0.3));
  CHECK(r.figures.marketer == doctest::Approx(0.3));
}

TEST_CASE("the top level publishes every population value alike") {
  Publication pub;
  Publication::ValueMap all;
  all.top = "*";
  pub.value_maps = {all};
  const PublishedClasses classes = {{{"*"}, 4}};
  const PopulationCounts population = {{{"anything"}, 6}, {{"else"}, 4}};
  const RiskReport r = risk_report(pub, with_population(0.2), classes, &population);
  REQUIRE(r.figures.journalist);
  CHECK(r.population_unplaced == 0);
  CHECK(r.figures.journalist->highest == doctest::Approx(0.1));
  // (1/4) x 4/10
  CHECK(r.figures.marketer == doctest::Approx(0.1));
  CHECK(r.figures.prosecutor.highest == doctest::Approx(0.25));
}

TEST_CASE("a published class with no population row: no journalist figures, a note") {
  const PublishedClasses classes = {{{"30-39", "F"}, 2}, {{"40-49", "M"}, 3}};
  const PopulationCounts population = {{{"30", "F"}, 3}};
  const RiskReport r = risk_report(two_levels(), with_population(0.3), classes, &population);
  CHECK_FALSE(r.figures.journalist);
  CHECK(r.population_note.find("population table stats.census: 1 released class(es) of 3 "
                               "record(s) have no record in the population table") == 0);
  CHECK(r.figures.marketer == doctest::Approx(2.0 / 5));  // J / n
}

TEST_CASE("Mondrian: no value maps, the note says why; no population: prosecutor only") {
  Publication mondrian;
  mondrian.no_value_maps = "Mondrian cuts its classes from the table's own values";
  const PublishedClasses classes = {{{"[30-39]"}, 5}};
  const PopulationCounts population = {{{"31"}, 9}};
  const RiskReport r = risk_report(mondrian, with_population(0.3), classes, &population);
  CHECK_FALSE(r.figures.journalist);
  CHECK(r.population_note == mondrian.no_value_maps);
  CHECK(r.figures.prosecutor.highest == doctest::Approx(0.2));
  ExportSettings none;
  none.risk_threshold = 0.3;
  const RiskReport p = risk_report(two_levels(), none, classes, nullptr);
  CHECK(p.population.empty());
  CHECK(p.population_note.empty());
  CHECK_FALSE(p.figures.journalist);
  CHECK(p.figures.records == 5);
}
