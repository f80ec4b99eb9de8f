// Where the demo data lives: the repository's own copy of ADULT
// (data/adult/), or KANON_ADULT_DIR when set.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace kanon::testing {

inline std::string adult_dir() {
  if (const char* d = std::getenv("KANON_ADULT_DIR")) return d;
  if (const char* s = std::getenv("KANON_SOURCE_DIR")) return std::string(s) + "/data/adult";
  throw std::runtime_error("KANON_SOURCE_DIR is not set (run the tests via ctest)");
}

}  // namespace kanon::testing
