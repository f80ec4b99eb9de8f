// libpg_query's scanner over a text, read straight from the protobuf
// message pg_query_scan returns (pg_query.proto: ScanResult, ScanToken)
// instead of unpacking it with protobuf-c, which allocates one object per
// token and cost about as much as the scan itself (bench/README.md,
// rewriter_bench, "catalog guard: scan + place").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kanon::rewriter {

// One token: where it begins and its pg_query Token number
// (PG_QUERY__TOKEN__*). The scanner's own end is not kept: callers take the
// next token's start (it is short for some tokens, e.g. U&"...").
struct ScannedToken {
  int32_t start = 0;
  int32_t token = 0;
};

class ScannedTokens {
 public:
  explicit ScannedTokens(std::string_view sql);

  // False when the text does not scan, or the message could not be read
  // (callers fail closed).
  bool ok() const { return ok_; }
  size_t size() const { return tokens_.size(); }
  const ScannedToken& at(size_t i) const { return tokens_[i]; }
  // Where the token after token i begins (the text's end after the last).
  size_t next_start(size_t i) const {
    return i + 1 < tokens_.size() ? static_cast<size_t>(tokens_[i + 1].start) : text_size_;
  }

 private:
  std::vector<ScannedToken> tokens_;
  size_t text_size_ = 0;
  bool ok_ = false;
};

// Decodes a packed pg_query ScanResult into `out` (appended); false when the
// bytes are not a well-formed message. Exposed for tests.
bool decode_scan_result(const uint8_t* data, size_t size, std::vector<ScannedToken>& out);

}  // namespace kanon::rewriter
