#include "publish/published_rows.h"

#include <set>

namespace kanon::publish {

namespace {

const std::string kMasked = "*";

}  // namespace

PublishedRows::PublishedRows(const LiveTable& live, const Publication& pub,
                             const policy::TablePolicy& policy, bool drop_suppressed)
    : live_(live), pub_(pub), drop_suppressed_(drop_suppressed) {
  const auto& header = live.table.header;
  std::set<std::string> dropped;
  for (const auto& d : policy.direct_identifiers) dropped.insert(d.column);
  qi_of_column_.assign(header.size(), -1);
  for (size_t q = 0; q < pub.qi_columns.size(); ++q)
    qi_of_column_[pub.qi_columns[q]] = static_cast<int>(q);
  for (size_t c = 0; c < header.size(); ++c)
    if (!dropped.count(header[c]) && static_cast<int>(c) != live.person_column)
      columns_.push_back(c);
  class_sizes_.assign(pub.class_values.size(), 0);
  for (const int64_t cls : pub.row_class) {
    if (cls < 0) ++suppressed_;
    if (cls >= 0) ++class_sizes_[cls];
    if (cls >= 0 || !drop_suppressed) ++size_;
  }
}

bool PublishedRows::fill(size_t r, std::vector<const std::string*>& fields) const {
  const int64_t cls = pub_.row_class[r];
  if (cls < 0 && drop_suppressed_) return false;
  for (size_t i = 0; i < columns_.size(); ++i) {
    const size_t c = columns_[i];
    const int q = qi_of_column_[c];
    if (q >= 0) {
      fields[i] = cls < 0 ? &kMasked : &pub_.class_values[cls][q];
    } else {
      fields[i] = live_.nulls[r][c] ? nullptr : &live_.table.rows[r][c];
    }
  }
  return true;
}

}  // namespace kanon::publish
