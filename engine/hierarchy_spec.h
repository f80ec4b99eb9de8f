// Functional hierarchy specs (YAML) that expand, over the distinct values of a
// column, to the tabular form of hierarchy.h. Kinds (`type:`):
//   intervals  numeric values; `widths: [5, 10, 20]` one interval width per
//              level, each a multiple of the previous; optional `min:` anchor
//              (default: the smallest value). Labels are `[lo, hi)`.
//   dates      `YYYY-MM-DD` values; `levels:` a subsequence of
//              [month, year, decade] (default all three).
//   mask       codes such as ZIP; `levels: [1, 2, 3]` characters masked per
//              level (strictly increasing), `from: right` (suffix, default) or
//              `left` (prefix), `char: "*"`.
//   ordered    ordered categories; `order: [...]` lists every value,
//              `sizes: [2, 4]` consecutive group sizes per level, each a
//              multiple of the previous. Labels are `first..last`.
// A top level `*` is appended. Errors throw HierarchyError with the source,
// the YAML line, the key and the offending value ("s:3: widths: 7 is not a
// multiple of 5 ..."), read with base::YamlReader.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "engine/hierarchy.h"

namespace kanon::engine {

HierarchyTable expand_hierarchy_spec(const YAML::Node& spec, const std::vector<std::string>& values,
                                     const std::string& source);

// Loads a YAML spec file (does not expand it).
YAML::Node read_hierarchy_spec_file(const std::string& path);

}  // namespace kanon::engine
