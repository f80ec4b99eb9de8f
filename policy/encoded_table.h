// EncodedTable: the quasi-identifiers (and the optional sensitive attribute)
// of one protected table, dictionary-encoded, with identical rows folded into
// one weighted row. Tree building only ever needs the counts of attribute
// values, so folding loses nothing and makes a table repeated 32 times cost
// what the original costs.
//
// Values are the canonical text PostgreSQL prints under kanon's pinned
// session settings (see table_loader.h); SQL NULL is kept as kNullCode and is
// never equal to any value. Not thread-safe while being filled; immutable and
// shareable afterwards.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/dictionary.h"

namespace kanon::policy {

inline constexpr uint32_t kNullCode = UINT32_MAX;

struct EncodedColumn {
  std::string name;
  std::string type;  // SQL type name without modifiers, e.g. "integer", "character varying"
  engine::Dictionary dictionary;
};

class EncodedTable {
 public:
  // `attributes` are the quasi-identifiers in policy order; `sensitive` and
  // `person` (who a row belongs to: policy `person:`) may be empty.
  // REQUIRES: at most 64 attributes.
  EncodedTable(std::vector<EncodedColumn> attributes, std::optional<EncodedColumn> sensitive,
               std::optional<EncodedColumn> person = std::nullopt);

  // Adds `weight` rows with these values (attributes, then the sensitive value
  // when there is one, then the person when there is one; nullopt is NULL)
  // and returns their distinct row. REQUIRES: values.size() == width().
  uint32_t add_row(std::span<const std::optional<std::string_view>> values, uint64_t weight = 1);

  size_t attribute_count() const { return attributes_.size(); }
  bool has_sensitive() const { return sensitive_.has_value(); }
  bool has_person() const { return person_.has_value(); }
  // The column of the person code (after the sensitive one). REQUIRES: has_person().
  size_t person_index() const { return attributes_.size() + (sensitive_ ? 1 : 0); }
  // Distinct persons (a NULL person is one more, kNullCode).
  size_t person_count() const { return person_ ? person_->dictionary.size() : 0; }
  size_t width() const { return attributes_.size() + (sensitive_ ? 1 : 0) + (person_ ? 1 : 0); }
  const EncodedColumn& attribute(size_t i) const { return attributes_[i]; }
  const std::vector<EncodedColumn>& attributes() const { return attributes_; }
  const std::optional<EncodedColumn>& sensitive() const { return sensitive_; }
  // The dictionary of column `column` (< width()): an attribute's, the
  // sensitive one's or the person's.
  const engine::Dictionary& dictionary(size_t column) const;

  // Distinct rows; codes are row-major, width() per row.
  size_t distinct_rows() const { return weights_.size(); }
  uint64_t total_rows() const { return total_rows_; }
  const std::vector<uint32_t>& codes() const { return codes_; }
  const std::vector<uint64_t>& weights() const { return weights_; }
  uint32_t code(size_t row, size_t column) const { return codes_[row * width() + column]; }

 private:
  std::vector<EncodedColumn> attributes_;
  std::optional<EncodedColumn> sensitive_;
  std::optional<EncodedColumn> person_;
  std::vector<uint32_t> codes_;
  std::vector<uint64_t> weights_;
  uint64_t total_rows_ = 0;
  std::unordered_map<std::string, uint32_t> row_index_;  // packed codes -> distinct row
  std::vector<uint32_t> scratch_;
};

}  // namespace kanon::policy
