// Dictionary: maps the distinct values of one attribute to dense codes
// 0..m-1 in order of first appearance, as ARX encodes its data.
//
// Not thread-safe for writers; concurrent readers of a finished dictionary
// are fine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kanon::engine {

class Dictionary {
 public:
  // Returns the code of `value`, adding it when it is new.
  uint32_t encode(std::string_view value);
  // The code of `value`, or nullopt when it was never added.
  std::optional<uint32_t> find(std::string_view value) const;
  // REQUIRES: code < size().
  const std::string& decode(uint32_t code) const { return values_[code]; }
  uint32_t size() const { return static_cast<uint32_t>(values_.size()); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> values_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> codes_;
};

}  // namespace kanon::engine
