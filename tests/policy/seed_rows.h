// The 11-row example of ../shared/seeds/immuta-sql-k-anonymization.txt:
// occupation, city, state. Shared by the tests that start from it.
#pragma once

#include <array>

namespace kanon::policy::testing {

inline constexpr std::array<std::array<const char*, 3>, 11> kSeedRows = {{
    {"Lawyer", "Washington", "DC"},
    {"Lawyer", "Washington", "DC"},
    {"Lawyer", "Hamlet", "OH"},
    {"Accountant", "Hamlet", "OH"},
    {"Farmer", "Hamlet", "OH"},
    {"Farmer", "Hamlet", "OH"},
    {"Lawyer", "Columbus", "OH"},
    {"Accountant", "Withamsville", "OH"},
    {"Accountant", "Whately", "MA"},
    {"Accountant", "College Park", "MD"},
    {"Accountant", "Bellevue", "KY"},
}};

}  // namespace kanon::policy::testing
