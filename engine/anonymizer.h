// The engine's front door: a job (input, roles, hierarchies, models,
// algorithm, switches) -> search -> anonymized CSV + JSON report.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/checker.h"
#include "engine/csv.h"
#include "engine/dataset.h"
#include "engine/privacy_model.h"
#include "engine/quality_metric.h"
#include "engine/search.h"

namespace kanon::engine {

enum class Algorithm { kFlash, kBestFirst };

struct AnonymizationJob {
  std::string input;
  char delimiter = ';';
  std::vector<AttributeSpec> attributes;
  PrivacyModel privacy;
  MetricKind metric = MetricKind::kLoss;
  Algorithm algorithm = Algorithm::kFlash;
  CheckerOptions checker;
  double time_limit_s = 0;
  std::string output;  // empty: not written
  std::string report;  // empty: not written
};

struct Outcome {
  SearchResult search;
  CheckResult at_optimum;                // the optimum re-checked
  std::map<std::string, double> losses;  // every quality model at the optimum
};

// Searches `data` and re-evaluates the optimum under every quality model.
Outcome anonymize(const Dataset& data, const PrivacyModel& privacy, MetricKind metric,
                  Algorithm algorithm, const CheckerOptions& checker, const SearchOptions& search);

// Rows whose class fails the privacy model under `levels`.
std::vector<uint8_t> suppressed_rows(const Dataset& data, const PrivacyModel& privacy,
                                     const Levels& levels);

void write_anonymized_csv(const std::string& path, const CsvTable& table, const Dataset& data,
                          const std::vector<AttributeSpec>& specs, const PrivacyModel& privacy,
                          const Levels& levels, char delimiter);

std::string report_json(const Dataset& data, const Outcome& outcome, const PrivacyModel& privacy,
                        MetricKind metric);

// Loads, searches and writes; returns the outcome. Throws on input errors.
Outcome run_job(const AnonymizationJob& job,
                const std::function<void(const SearchProgress&)>& progress = nullptr);

}  // namespace kanon::engine
