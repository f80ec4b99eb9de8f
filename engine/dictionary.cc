#include "engine/dictionary.h"

namespace kanon::engine {

uint32_t Dictionary::encode(std::string_view value) {
  if (auto it = codes_.find(value); it != codes_.end()) return it->second;
  const auto code = static_cast<uint32_t>(values_.size());
  values_.emplace_back(value);
  codes_.emplace(values_.back(), code);
  return code;
}

std::optional<uint32_t> Dictionary::find(std::string_view value) const {
  if (auto it = codes_.find(value); it != codes_.end()) return it->second;
  return std::nullopt;
}

}  // namespace kanon::engine
