// What the order rows come in tells about the values a release hides. In
// mode: inline and view a restricted session reads the table's rows in the
// order PostgreSQL stores them (a plain scan follows the heap), masked. When
// an administrator loaded the table sorted by a quasi-identifier, grouped by
// it, or CLUSTERed it so, a hidden value sits among shown values equal to
// it: `Boston, Boston, NULL, Boston` tells the NULL; so do keys numbered
// during such a load, in key order. This measures that on rows in an order
// (stored, or by key): for each row whose value of a column the release
// hides, the guess "the nearest row (before or after it, among rows stored
// next to each other) whose value is shown has the same one", against how
// often that guess is right when the order says nothing (each hidden value's
// share among the hidden rows times its share among the shown ones).
// store/row_order.h reads the rows and fails the build on a leak.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kanon::policy {

// Rows of one table in stored order: the heap block each is in (rows of
// blocks not next to each other are not neighbours) and, per column, its
// raw value (as text; nullopt: NULL) and whether the release shows it
// unchanged.
struct StoredRows {
  std::vector<int64_t> block;
  struct Column {
    std::string name;
    std::vector<std::optional<std::string>> raw;
    std::vector<bool> shown;
  };
  std::vector<Column> columns;
};

struct OrderGuess {
  std::string column;
  size_t hidden = 0;    // hidden non-NULL values with a shown neighbour
  size_t guessed = 0;   // of those, equal to the nearest shown neighbour's
  double expected = 0;  // the share guessed right when the order tells nothing

  double rate() const { return hidden ? static_cast<double>(guessed) / hidden : 0.0; }
  // At least 10 hidden values, guessed right at least 25 points more often
  // than expected, and four standard deviations above it.
  bool leaks() const;
};

// The guess for every column of `rows`.
std::vector<OrderGuess> guess_from_order(const StoredRows& rows);

}  // namespace kanon::policy
