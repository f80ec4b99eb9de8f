// JsonTree: a read-only DOM over one JSON document, made for libpg_query's
// parse-tree output (pg_query_parse). Values live in one flat vector and are
// linked first-child/next-sibling, so parsing allocates little. Strings are
// views into the document when they hold no escapes, else into storage the
// tree owns. Internal to the parser boundary in rewriter/.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace kanon::rewriter {

struct JsonValue {
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t number = 0;     // integers only (libpg_query emits no fractions for positions)
  std::string_view text;  // kString: decoded; kNumber: as written
  std::string_view key;   // member name when the parent is an object
  int32_t first_child = -1;
  int32_t next_sibling = -1;
};

class JsonTree {
 public:
  // Parses `doc` (which must outlive the tree). Returns false on malformed
  // JSON (never expected from libpg_query; the caller fails closed).
  bool parse(std::string_view doc);

  const JsonValue& at(int32_t i) const { return values_[static_cast<size_t>(i)]; }
  int32_t root() const { return values_.empty() ? -1 : 0; }
  int32_t size() const { return static_cast<int32_t>(values_.size()); }
  // Frees the buffers when they grew past `max_values` (a huge statement must
  // not pin its memory in a thread-local tree).
  void release_if_larger_than(size_t max_values);

  // Member `key` of object `obj`, or -1.
  int32_t member(int32_t obj, std::string_view key) const;

 private:
  int32_t parse_value(std::string_view key);
  bool parse_string(std::string_view& out);
  void skip_ws();

  std::string_view doc_;
  size_t pos_ = 0;
  bool failed_ = false;
  int depth_ = 0;
  std::vector<JsonValue> values_;
  std::deque<std::string> decoded_;
};

}  // namespace kanon::rewriter
