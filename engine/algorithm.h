// The engine's algorithms and their names ("flash", "bfs", "mondrian"): the
// one parser every front end uses (job files, policy files, EXPORT options,
// the command line).
#pragma once

#include <optional>
#include <string_view>

#include "base/name_table.h"

namespace kanon::engine {

// kMondrian: strict multidimensional Mondrian (mondrian.h), not a lattice
// search; k and distinct l only, no suppression, quasi-identifiers may lack a
// hierarchy (numbers become ranges, other values sets).
enum class Algorithm { kFlash, kBestFirst, kMondrian };

const base::NameTable<Algorithm>& algorithm_names();
inline const char* algorithm_name(Algorithm a) {
  return algorithm_names().name(a);
}
inline std::optional<Algorithm> parse_algorithm(std::string_view name) {
  return algorithm_names().parse(name);
}

}  // namespace kanon::engine
