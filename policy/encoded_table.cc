#include "policy/encoded_table.h"

#include <cassert>
#include <cstring>
#include <stdexcept>

namespace kanon::policy {

EncodedTable::EncodedTable(std::vector<EncodedColumn> attributes,
                           std::optional<EncodedColumn> sensitive,
                           std::optional<EncodedColumn> person)
    : attributes_(std::move(attributes)),
      sensitive_(std::move(sensitive)),
      person_(std::move(person)) {
  if (attributes_.size() > 64) throw std::invalid_argument("at most 64 quasi-identifiers");
  scratch_.resize(width());
}

uint32_t EncodedTable::add_row(std::span<const std::optional<std::string_view>> values,
                               uint64_t weight) {
  assert(values.size() == width());
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) {
      scratch_[i] = kNullCode;
      continue;
    }
    auto& dict = i < attributes_.size()                  ? attributes_[i].dictionary
                 : sensitive_ && i == attributes_.size() ? sensitive_->dictionary
                                                         : person_->dictionary;
    scratch_[i] = dict.encode(*values[i]);
  }
  std::string key(reinterpret_cast<const char*>(scratch_.data()),
                  scratch_.size() * sizeof(uint32_t));
  const auto [it, inserted] = row_index_.try_emplace(std::move(key), weights_.size());
  if (inserted) {
    codes_.insert(codes_.end(), scratch_.begin(), scratch_.end());
    weights_.push_back(weight);
  } else {
    weights_[it->second] += weight;
  }
  total_rows_ += weight;
  return it->second;
}

const engine::Dictionary& EncodedTable::dictionary(size_t column) const {
  if (column < attributes_.size()) return attributes_[column].dictionary;
  if (sensitive_ && column == attributes_.size()) return sensitive_->dictionary;
  return person_->dictionary;
}

}  // namespace kanon::policy
