// What an algorithm decided for the rows of a live table, in one shape for
// both kinds of algorithm, so run_export() writes and reports them alike:
//  - publish_lattice(): full-domain generalization with record suppression
//    (Flash or best-first search over the hierarchies' lattice);
//  - publish_mondrian(): strict multidimensional Mondrian partitioning
//    (numbers become ranges, hierarchy attributes the lowest common node,
//    other values sets), no suppression.
// Both poll ExportHooks::cancelled from the engine's progress callback and
// throw ExportError 57014 when it says stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/csv.h"
#include "engine/dataset.h"
#include "engine/privacy_model.h"
#include "policy/table_policy.h"
#include "publish/export_request.h"
#include "publish/exporter.h"
#include "publish/live_table.h"
#include "publish/report.h"

namespace kanon::publish {

struct Publication {
  std::vector<int> qi_columns;  // table column of each quasi-identifier, policy order
  // class -> published value per quasi-identifier (qi_columns order)
  std::vector<std::vector<std::string>> class_values;
  std::vector<int64_t> row_class;  // input row -> class; -1: suppressed
  // Filled by the algorithm: privacy, metric, algorithm, suppression_limit,
  // attributes (without distinct_after), losses, lattice/search figures.
  ExportReport report;

  // How a value of another table (the population, for the report's
  // journalist risk) is published, per quasi-identifier: level 0 keeps it,
  // the top level makes it `top`, other levels look it up in `values` (every
  // level-0 value of the hierarchy; a value not there cannot be placed).
  struct ValueMap {
    bool identity = false;
    std::optional<std::string> top;
    std::unordered_map<std::string, std::string> values;
  };
  std::vector<ValueMap> value_maps;  // empty: the algorithm cannot place other rows
  std::string no_value_maps;         // why value_maps is empty (Mondrian)

  // The published value of `value` of quasi-identifier q; nullopt when it
  // cannot be placed. REQUIRES: q < value_maps.size().
  std::optional<std::string> publish_value(size_t q, const std::string& value) const {
    const ValueMap& m = value_maps[q];
    if (m.identity) return value;
    if (m.top) return m.top;
    const auto it = m.values.find(value);
    if (it == m.values.end()) return std::nullopt;
    return it->second;
  }
};

// With the policy's `person:` both run the engine in person mode on the
// live table's person column (k counts distinct persons per class).
Publication publish_lattice(const LiveTable& live, const policy::TablePolicy& policy,
                            const ExportSettings& settings, const ExportHooks& hooks);

Publication publish_mondrian(const LiveTable& live, const policy::TablePolicy& policy,
                             const ExportSettings& settings, const ExportHooks& hooks);

// Helpers shared by the producers and run_export().
namespace detail {

// Thrown through the engine's progress callbacks to stop a run.
struct Cancelled {};

ExportError cancelled_error();

// k, the suppression limit and distinct l-diversity (when the policy has a
// sensitive attribute and l is asked for) of these settings.
engine::PrivacyModel privacy_model(const policy::TablePolicy& policy,
                                   const ExportSettings& settings);

// The engine roles of the policy's columns: quasi-identifiers with their
// hierarchy file, else `fallback`; direct identifiers dropped; the sensitive
// attribute when l-diversity is asked for. `files` gets each
// quasi-identifier's hierarchy file ("" when none).
std::vector<engine::AttributeSpec> attribute_specs(const policy::TablePolicy& policy,
                                                   const ExportSettings& settings,
                                                   const engine::HierarchyProvider& fallback,
                                                   std::map<std::string, std::string>* files);

// True at most about twice per second.
class Throttle {
 public:
  bool due() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(500)) return false;
    last_ = now;
    return true;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace detail

}  // namespace kanon::publish
