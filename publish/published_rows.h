// The rows of the published copy, derived from the live table and what the
// algorithm decided (Publication): quasi-identifiers become their class's
// values, suppressed rows are dropped or keep '*' in every quasi-identifier,
// direct identifiers are dropped, every other column keeps its value.
// Nothing is copied: rows are visited in input order by for_each().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/table_policy.h"
#include "publish/live_table.h"
#include "publish/publication.h"

namespace kanon::publish {

class PublishedRows {
 public:
  // REQUIRES: `live` and `pub` outlive this object.
  PublishedRows(const LiveTable& live, const Publication& pub, const policy::TablePolicy& policy,
                bool drop_suppressed);

  // The live table's columns that are published, in table order.
  const std::vector<size_t>& columns() const { return columns_; }
  bool is_quasi_identifier(size_t column) const { return qi_of_column_[column] >= 0; }

  uint64_t size() const { return size_; }              // rows published
  uint64_t suppressed() const { return suppressed_; }  // rows of no class
  // Published rows per class (Publication::class_values order).
  const std::vector<uint64_t>& class_sizes() const { return class_sizes_; }

  // Calls f(fields) for every published row, in input order: fields[i] is
  // the value of columns()[i], nullptr for NULL; valid during the call.
  template <typename F>
  void for_each(F&& f) const {
    std::vector<const std::string*> fields(columns_.size());
    for (size_t r = 0; r < live_.table.rows.size(); ++r)
      if (fill(r, fields)) f(fields);
  }

 private:
  // The fields of input row r; false when the row is not published.
  bool fill(size_t r, std::vector<const std::string*>& fields) const;

  const LiveTable& live_;
  const Publication& pub_;
  bool drop_suppressed_;
  std::vector<size_t> columns_;
  std::vector<int> qi_of_column_;  // live column -> quasi-identifier index, -1: none
  uint64_t size_ = 0;
  uint64_t suppressed_ = 0;
  std::vector<uint64_t> class_sizes_;
};

}  // namespace kanon::publish
