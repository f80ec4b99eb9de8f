// Loading an AnonymizationJob from a YAML job file (see docs/engine.md):
//
//   input: adult.csv
//   delimiter: ";"
//   attributes:
//     age: {role: quasi, hierarchy: adult_hierarchy_age.csv}
//     zip: {role: quasi, hierarchy: {type: mask, levels: [1, 2, 3]}}
//     hours: quasi            # no hierarchy: Mondrian only (numbers -> ranges, else sets)
//     disease: sensitive
//     name: identifying
//   person: patient_id        # optional: k counts distinct persons of this column
//   k: 5
//   l: 2                      # optional; with diversity: distinct|entropy|recursive, c:
//   suppression: 0.05
//   metric: loss              # loss|dm|entropy|precision|height|aecs
//   algorithm: flash          # flash|bfs|mondrian
//   mondrian: {choice: span, sample: 0.01, split: tree, distributed: false}
//             # choice: span|max-entropy|min-entropy; split: tree|quantiles
//   time_limit: 10
//   optimizations: {projection: true, rollup: true, history: true,
//                   history_max_relative_size: 0.2, history_max_relative_to_source: 0.8,
//                   history_max_snapshots: 200}
//   output: out.csv
//   report: report.json
//
// Relative paths are resolved against the job file's directory. Errors throw
// JobError (base::ConfigError) naming the file, line and key:
//   "job.yaml:5: mondrian.choice: 'widest' is not one of span, max-entropy, min-entropy"
#pragma once

#include <string>

#include "base/config_error.h"
#include "engine/anonymizer.h"

namespace kanon::engine {

using JobError = base::ConfigError;

AnonymizationJob load_job(const std::string& path);

// The hierarchy provider for a file: `.yaml`/`.yml` functional spec, otherwise tabular CSV.
HierarchyProvider hierarchy_from_file(const std::string& path);

}  // namespace kanon::engine
