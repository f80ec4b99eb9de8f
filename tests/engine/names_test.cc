// The engine's name tables: the one parser of algorithm, metric, Mondrian
// choice/split and diversity names that every front end uses.
#include <doctest/doctest.h>

#include "engine/algorithm.h"
#include "engine/mondrian.h"
#include "engine/mondrian_split.h"
#include "engine/privacy_model.h"
#include "engine/quality_metric.h"

namespace kanon::engine {

TEST_CASE("algorithm names: parse, print, and the error for an unknown name") {
  CHECK(parse_algorithm("flash") == Algorithm::kFlash);
  CHECK(parse_algorithm("bfs") == Algorithm::kBestFirst);
  CHECK(parse_algorithm("mondrian") == Algorithm::kMondrian);
  for (const auto a : {Algorithm::kFlash, Algorithm::kBestFirst, Algorithm::kMondrian})
    CHECK(parse_algorithm(algorithm_name(a)) == a);
  CHECK_FALSE(parse_algorithm("genetic"));
  CHECK_FALSE(parse_algorithm("Flash"));  // case is the caller's business (EXPORT lowers it)
  CHECK_FALSE(parse_algorithm(""));
  CHECK(algorithm_names().unknown("genetic") == "'genetic' is not one of flash, bfs, mondrian");
  CHECK(algorithm_names().list(" or ") == "flash, bfs or mondrian");
  CHECK(algorithm_names().names() == std::vector<std::string>{"flash", "bfs", "mondrian"});
}

TEST_CASE("metric names and their aliases") {
  for (const MetricKind k : all_metrics()) CHECK(parse_metric(metric_name(k)) == k);
  CHECK(parse_metric("dm*") == MetricKind::kDiscernibility);
  CHECK(parse_metric("dmstar") == MetricKind::kDiscernibility);
  CHECK(parse_metric("discernibility") == MetricKind::kDiscernibility);
  CHECK(std::string(metric_name(MetricKind::kDiscernibility)) == "dm");
  CHECK_FALSE(parse_metric("fast"));
  CHECK(metric_names().list() == "loss, dm, entropy, precision, height, aecs");
}

TEST_CASE("Mondrian choice, split mode and diversity names") {
  CHECK(parse_mondrian_choice("max_entropy") == MondrianChoice::kMaxEntropy);
  CHECK(std::string(mondrian_choice_name(MondrianChoice::kMaxEntropy)) == "max-entropy");
  CHECK(mondrian_choices().list(" or ") == "span, max-entropy or min-entropy");
  CHECK_FALSE(parse_mondrian_choice("widest"));
  CHECK(parse_split_mode("quantiles") == SplitMode::kQuantiles);
  CHECK(std::string(split_mode_name(SplitMode::kTree)) == "tree");
  CHECK_FALSE(parse_split_mode("random"));
  CHECK(parse_diversity("recursive") == Diversity::kRecursive);
  CHECK_FALSE(parse_diversity("none"));
  CHECK(diversity_names().list() == "distinct, entropy, recursive");
}

}  // namespace kanon::engine
