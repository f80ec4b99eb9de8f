// The risk figures against examples computed by hand from the definitions
// in policy/reidentification_risk.h (ARX after El Emam; docs/risk.md).
#include "policy/reidentification_risk.h"

#include <doctest/doctest.h>

#include <vector>

using namespace kanon::policy;

namespace {

// Two classes of 2 records, one of 3, one of 5: n = 12, J = 4.
const std::vector<ClassSizes> kRelease = {{2, 0, 2}, {3, 0, 1}, {5, 0, 1}};

}  // namespace

TEST_CASE("prosecutor: highest, records at it, average, records above the threshold") {
  const RiskFigures r = assess_risk(kRelease, 0.25, false);
  CHECK(r.records == 12);
  CHECK(r.classes == 4);
  CHECK(r.prosecutor.highest == doctest::Approx(0.5));
  CHECK(r.prosecutor.records_at_highest == 4);
  CHECK(r.prosecutor.average == doctest::Approx(4.0 / 12));
  // 1/2 and 1/3 are above 0.25, 1/5 is not: 4 + 3 records.
  CHECK(r.prosecutor.records_above == 7);
  CHECK(r.prosecutor.share_above == doctest::Approx(7.0 / 12));
  CHECK_FALSE(r.journalist);
  CHECK_FALSE(r.with_population);
  // Without a population the marketer's success rate is J / n.
  CHECK(r.marketer == doctest::Approx(4.0 / 12));
}

TEST_CASE("above the threshold is strict, as in ARX") {
  // A risk equal to the threshold is not above it.
  CHECK(assess_risk(kRelease, 1.0 / 3, false).prosecutor.records_above == 4);
  CHECK(assess_risk(kRelease, 0.5, false).prosecutor.records_above == 0);
  CHECK(assess_risk(kRelease, 0.2, false).prosecutor.records_above == 7);
  CHECK(assess_risk(kRelease, 0.19, false).prosecutor.records_above == 12);
  CHECK(assess_risk(kRelease, 1, false).prosecutor.records_above == 0);
  // Every record unique: risk 1, never above any threshold <= 1.
  const std::vector<ClassSizes> uniques = {{1, 0, 3}};
  const RiskFigures u = assess_risk(uniques, 1, false);
  CHECK(u.prosecutor.highest == 1);
  CHECK(u.prosecutor.records_at_highest == 3);
  CHECK(u.prosecutor.average == 1);
  CHECK(u.prosecutor.records_above == 0);
  CHECK(assess_risk(uniques, 0.99, false).prosecutor.share_above == 1);
}

TEST_CASE("journalist and marketer with population classes") {
  // (f, F): (2, 4), (2, 10), (3, 3), (5, 20); n = 12, J = 4, sum F = 37,
  // sum f/F = 0.5 + 0.2 + 1 + 0.25 = 1.95.
  const std::vector<ClassSizes> classes = {{2, 4, 1}, {2, 10, 1}, {3, 3, 1}, {5, 20, 1}};
  const RiskFigures r = assess_risk(classes, 0.25, true);
  REQUIRE(r.journalist);
  CHECK(r.with_population);
  CHECK(r.journalist->highest == doctest::Approx(1.0 / 3));
  // max(4/37 = 0.108, 1.95/12 = 0.1625)
  CHECK(r.journalist->average == doctest::Approx(1.95 / 12));
  // Only F = 3 is above 0.25 (F = 4 is equal to it): its 3 records.
  CHECK(r.journalist->records_above == 3);
  CHECK(r.journalist->share_above == doctest::Approx(0.25));
  CHECK(r.marketer == doctest::Approx(1.95 / 12));
  // The prosecutor figures do not use the population.
  CHECK(r.prosecutor.highest == doctest::Approx(0.5));
  CHECK(r.prosecutor.average == doctest::Approx(4.0 / 12));
}

TEST_CASE("journalist average: J / sum F when it is the larger term") {
  // (1, 2), (3, 3): J / sum F = 2/5 = 0.4; (1/2 + 1) / 4 = 0.375.
  const std::vector<ClassSizes> classes = {{1, 2, 1}, {3, 3, 1}};
  const RiskFigures r = assess_risk(classes, 0.1, true);
  CHECK(r.journalist->average == doctest::Approx(0.4));
  CHECK(r.marketer == doctest::Approx(0.375));
  CHECK(r.journalist->highest == doctest::Approx(0.5));
  CHECK(r.journalist->records_above == 4);
}

TEST_CASE("the population equal to the release gives the prosecutor's figures") {
  const std::vector<ClassSizes> classes = {{2, 2, 2}, {3, 3, 1}, {5, 5, 1}};
  const RiskFigures r = assess_risk(classes, 0.25, true);
  CHECK(r.journalist->highest == doctest::Approx(r.prosecutor.highest));
  CHECK(r.journalist->average == doctest::Approx(r.prosecutor.average));
  CHECK(r.journalist->records_above == r.prosecutor.records_above);
  CHECK(r.marketer == doctest::Approx(r.prosecutor.average));
}

TEST_CASE("an empty release has no risk") {
  const std::vector<ClassSizes> none;
  const RiskFigures r = assess_risk(none, 0.2, false);
  CHECK(r.records == 0);
  CHECK(r.classes == 0);
  CHECK(r.prosecutor.highest == 0);
  CHECK(r.prosecutor.records_at_highest == 0);
  CHECK(r.prosecutor.average == 0);
  CHECK(r.prosecutor.share_above == 0);
  CHECK(r.marketer == 0);
  const RiskFigures p = assess_risk(none, 0.2, true);
  REQUIRE(p.journalist);
  CHECK(p.journalist->highest == 0);
  CHECK(p.journalist->average == 0);
  // Entries with no class count for nothing.
  const std::vector<ClassSizes> zero = {{4, 0, 0}};
  CHECK(assess_risk(zero, 0.2, true).records == 0);
}

TEST_CASE("a class missing from the population, or smaller there, is an error") {
  const std::vector<ClassSizes> missing = {{2, 4, 1}, {3, 0, 2}};
  CHECK(population_mismatch(missing).find("2 released class(es) of 3 record(s) have no record") !=
        std::string::npos);
  CHECK_THROWS_AS(assess_risk(missing, 0.2, true), RiskError);
  // Without the population the same classes are fine.
  CHECK(assess_risk(missing, 0.2, false).records == 8);
  const std::vector<ClassSizes> smaller = {{5, 4, 1}};
  CHECK(population_mismatch(smaller).find("only 4 record(s)") != std::string::npos);
  CHECK_THROWS_AS(assess_risk(smaller, 0.2, true), RiskError);
  const std::vector<ClassSizes> fine = {{2, 2, 1}, {3, 7, 1}};
  CHECK(population_mismatch(fine).empty());
}

TEST_CASE("a threshold outside (0, 1] or a class of size 0 is refused") {
  CHECK_THROWS_AS(assess_risk(kRelease, 0, false), RiskError);
  CHECK_THROWS_AS(assess_risk(kRelease, -0.1, false), RiskError);
  CHECK_THROWS_AS(assess_risk(kRelease, 1.5, false), RiskError);
  const std::vector<ClassSizes> empty_class = {{0, 0, 1}};
  CHECK_THROWS_AS(assess_risk(empty_class, 0.2, false), RiskError);
}
