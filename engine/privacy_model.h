// Privacy models evaluated per equivalence class: k-anonymity and, on one
// sensitive attribute, distinct, entropy or recursive-(c,l) diversity; plus
// the record suppression limit floor(s x rows).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/name_table.h"

namespace kanon::engine {

enum class Diversity { kNone, kDistinct, kEntropy, kRecursive };

// distinct, entropy, recursive (kNone has no name).
const base::NameTable<Diversity>& diversity_names();
inline std::optional<Diversity> parse_diversity(std::string_view name) {
  return diversity_names().parse(name);
}

struct SensitiveCount {
  int32_t value;
  uint32_t count;
};

struct PrivacyModel {
  uint32_t k = 2;
  Diversity diversity = Diversity::kNone;
  double l = 1;            // distinct/entropy/recursive l
  double c = 1;            // recursive (c,l)
  double suppression = 0;  // fraction of rows that may be suppressed

  uint64_t suppression_limit(uint64_t rows) const;
  bool needs_sensitive() const { return diversity != Diversity::kNone; }

  // Whether "fulfils the model (within the suppression limit)" is monotone in
  // the lattice, which is what predictive tagging of anonymity needs.
  //  - k-anonymity and distinct-l: if one of the classes merged into a class
  //    passes, the merged class passes (size and distinct values only grow),
  //    so merged failing classes consist of failing classes only and the
  //    number of suppressed rows can only shrink under generalization. The
  //    same holds when k counts distinct persons (person mode): a merged
  //    class has at least the persons of each of its parts.
  //  - entropy and recursive-(c,l): a passing class merged with a failing one
  //    can fail (e.g. {x,y} with {x x 100}), so with suppression more rows may
  //    be suppressed after generalizing: not monotone. Without suppression the
  //    merged class of passing classes passes (entropy is concave; recursive
  //    diversity is closed under union), so they are monotone when s = 0.
  bool monotone() const;

  // `dist` holds the class's sensitive values with counts (distinct values).
  bool class_passes(uint32_t size, std::span<const SensitiveCount> dist) const {
    return size >= k && diverse(size, dist);
  }
  // The l-diversity part alone (true without diversity). In person mode k is
  // tested on the class's distinct persons, diversity still on its `size` rows.
  bool diverse(uint32_t size, std::span<const SensitiveCount> dist) const;

  std::string describe() const;
};

}  // namespace kanon::engine
