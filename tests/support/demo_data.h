// Where the demo data lives: the repository's own copy of ADULT
// (data/adult/), or KANON_ADULT_DIR when set; and the demo policy on
// public.people (config/policies/people.yaml) for a table like it.
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

// A policy file's text: the demo's policy on public.people (k = 2 on
// occupation, city and state; name and ssn direct identifiers; postgres
// exempt) for the table public.<table>, in `mode`.
inline std::string people_policy_yaml(const std::string& table, const std::string& mode) {
  return "tables:\n"
         "  - table: public." +
         table +
         "\n"
         "    k: 2\n"
         "    quasi_identifiers: [occupation, city, state]\n"
         "    direct_identifiers: {name: null, ssn: \"***\"}\n"
         "    exempt: [postgres]\n"
         "    mode: " +
         mode + "\n";
}

}  // namespace kanon::testing
