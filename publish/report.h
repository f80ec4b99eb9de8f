// What an export did, for people: JSON (machine-readable, also stored in the
// exports table) and a self-contained HTML page (inline CSS, SVG histogram of
// class sizes, no external resources).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "policy/reidentification_risk.h"

namespace kanon::publish {

struct AttributeReport {
  std::string name;
  int level = 0;                 // chosen generalization level; -1: per class (Mondrian)
  int height = 0;                // levels of the hierarchy (0..height-1)
  std::string hierarchy;         // file, or "value -> *" for the default
  uint32_t distinct_before = 0;  // distinct values in the data
  uint32_t distinct_after = 0;   // distinct published values (kept rows)
  std::vector<std::pair<std::string, std::string>> examples;  // original -> published
  // Utility (docs/risk.md): the share of the rows read whose value is
  // published and not the hierarchy's top (suppressed rows and '*' release
  // nothing of it); lattice only, this attribute's part of the precision
  // metric (level / top level, a suppressed row counting 1) and of the loss
  // metric (Iyengar's, as engine/quality_metric.h computes it).
  double released_fraction = 0;
  std::optional<double> precision, loss;
};

// Re-identification risk of the published classes (docs/risk.md;
// policy/reidentification_risk.h). Suppressed rows are not in any class.
struct RiskReport {
  policy::RiskFigures figures;  // journalist figures only with a usable population
  std::string population;       // "schema.table", or "" when none was named
  uint64_t population_rows = 0;
  // Population rows whose values the hierarchies do not cover at the chosen
  // levels: they fall in no published class (each F_j is then a lower bound,
  // so the journalist and marketer figures err on the high side).
  uint64_t population_unplaced = 0;
  // Why a named population gave no figures (Mondrian, a mismatch), or "".
  std::string population_note;
};

struct ExportReport {
  std::string created_at;  // UTC, ISO 8601
  std::string source, target, command;
  std::string privacy, metric, algorithm, suppressed_rows;  // suppressed_rows: drop|mask
  uint32_t k = 0;
  uint64_t rows_in = 0, rows_out = 0, suppressed = 0, suppression_limit = 0;
  // With the policy's `person:` (its columns in `person`), class sizes --
  // min_class (k achieved), max_class and the histogram -- count distinct
  // persons; otherwise rows.
  std::string person;
  uint64_t classes = 0, min_class = 0, max_class = 0;
  bool timed_out = false;
  std::vector<AttributeReport> attributes;
  std::map<std::string, double> losses;  // every quality model at the optimum
  uint64_t lattice_size = 0, checked = 0;
  double search_ms = 0, total_ms = 0;
  std::vector<std::pair<std::string, uint64_t>> histogram;  // class-size bucket -> classes
  RiskReport risk;

  std::string levels_text() const;  // "age=2, sex=0"
  // Mondrian: generalized per class, no lattice.
  bool multidimensional() const { return algorithm.rfind("mondrian", 0) == 0; }
  bool counts_persons() const { return !person.empty(); }
};

// Buckets of class sizes: exact sizes when there are at most 12 distinct
// ones, else powers of two ("8-15").
std::vector<std::pair<std::string, uint64_t>> class_size_histogram(
    const std::map<uint64_t, uint64_t>& size_counts);

std::string report_to_json(const ExportReport& r);
std::string report_to_html(const ExportReport& r);

}  // namespace kanon::publish
