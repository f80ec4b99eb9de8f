// The engine's front door: a job (input, roles, hierarchies, models,
// algorithm, switches) -> search -> anonymized CSV + JSON report.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/algorithm.h"
#include "engine/checker.h"
#include "engine/csv.h"
#include "engine/dataset.h"
#include "engine/mondrian.h"
#include "engine/mondrian_output.h"
#include "engine/mondrian_split.h"
#include "engine/privacy_model.h"
#include "engine/quality_metric.h"
#include "engine/search.h"

namespace kanon::engine {

struct MondrianJobOptions {
  MondrianChoice choice = MondrianChoice::kSpan;
  double sample_fraction = 0.01;       // distributed: fraction of rows rank 0 samples
  SplitMode split = SplitMode::kTree;  // distributed: how the sample divides the rows
  bool distributed = false;            // run under MPI (the kanon binary; engine/mpi/)
};

struct AnonymizationJob {
  std::string input;
  char delimiter = ';';
  std::vector<AttributeSpec> attributes;
  std::string person;  // person mode: k counts distinct values of this column; empty: rows
  PrivacyModel privacy;
  MetricKind metric = MetricKind::kLoss;
  Algorithm algorithm = Algorithm::kFlash;
  CheckerOptions checker;
  double time_limit_s = 0;
  MondrianJobOptions mondrian;
  std::string output;  // empty: not written
  std::string report;  // empty: not written
};

struct Outcome {
  SearchResult search;
  CheckResult at_optimum;                  // the optimum re-checked
  std::map<std::string, double> losses;    // every quality model at the optimum
  std::optional<MondrianReport> mondrian;  // Algorithm::kMondrian
};

// Searches `data` and re-evaluates the optimum under every quality model.
Outcome anonymize(const Dataset& data, const PrivacyModel& privacy, MetricKind metric,
                  Algorithm algorithm, const CheckerOptions& checker, const SearchOptions& search);

// Rows whose class fails the privacy model under `levels` (counting persons
// when `data` does). Independent of the Checker: one hash map over all rows.
std::vector<uint8_t> suppressed_rows(const Dataset& data, const PrivacyModel& privacy,
                                     const Levels& levels);

void write_anonymized_csv(const std::string& path, const CsvTable& table, const Dataset& data,
                          const std::vector<AttributeSpec>& specs, const PrivacyModel& privacy,
                          const Levels& levels, char delimiter);

std::string report_json(const Dataset& data, const Outcome& outcome, const PrivacyModel& privacy,
                        MetricKind metric);

// Loads, searches (or partitions, for Mondrian) and writes; returns the
// outcome. Throws on input errors.
Outcome run_job(const AnonymizationJob& job,
                const std::function<void(const SearchProgress&)>& progress = nullptr,
                const std::function<void(const MondrianProgress&)>& mondrian_progress = nullptr);

// The Mondrian options of a job; throws DataError for settings Mondrian does
// not support (suppression, entropy/recursive diversity, person mode when
// distributed).
MondrianOptions mondrian_options(const AnonymizationJob& job);

// Single-process Mondrian: read, encode, partition, write output and report.
MondrianReport run_mondrian_job(const AnonymizationJob& job,
                                const std::function<void(const MondrianProgress&)>& progress);

}  // namespace kanon::engine
