// Types shared by the lattice searches (flash_search.h, best_first_search.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/lattice.h"

namespace kanon::engine {

struct SearchProgress {
  uint64_t checked = 0;
  uint64_t lattice_size = 0;
  std::optional<double> best;
  double elapsed_ms = 0;
};

struct SearchOptions {
  double time_limit_s = 0;  // 0 = none; when hit, the best transformation so far is returned
  std::function<void(const SearchProgress&)> progress;  // called after every check
};

struct SearchResult {
  bool found = false;  // false: no transformation satisfies the privacy model
  Levels levels;
  double value = 0;
  uint64_t checked = 0;
  uint64_t lattice_size = 0;
  double search_ms = 0;      // wall time
  double search_cpu_ms = 0;  // CPU time of the searching thread (ARX reports this)
  std::string algorithm;
  bool timed_out = false;
};

// The best transformation found so far (strictly better replaces; ties keep
// the first, which is correct: any optimum is).
struct Incumbent {
  bool found = false;
  Levels levels;
  double value = 0;
  bool offer(const Levels& l, double v) {
    if (found && !(v < value)) return false;
    found = true;
    levels = l;
    value = v;
    return true;
  }
  // Whether a lower bound rules a node out.
  bool beats(double bound) const { return found && bound >= value; }
};

}  // namespace kanon::engine
