#include "rewriter/scanned_tokens.h"

#include <pg_query.h>

#include <string>

namespace kanon::rewriter {
namespace {

// The protobuf wire format, as much of it as ScanResult uses.
class WireReader {
 public:
  WireReader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}

  bool done() const { return p_ == end_; }

  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;  // more than ten bytes
  }

  // Skips a field of wire type `type` (its key already read).
  bool skip(uint64_t type) {
    uint64_t v = 0;
    switch (type) {
      case 0:
        return varint(v);
      case 1:
        return advance(8);
      case 2:
        return varint(v) && advance(v);
      case 5:
        return advance(4);
      default:
        return false;  // groups and unknown types: not in this message
    }
  }

  // The bytes of a length-delimited field (its key already read).
  bool bytes(WireReader& inner) {
    uint64_t n = 0;
    if (!varint(n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    inner = WireReader(p_, static_cast<size_t>(n));
    p_ += n;
    return true;
  }

 private:
  bool advance(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - p_)) return false;
    p_ += n;
    return true;
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

// ScanToken: start = 1, end = 2, token = 4, keyword_kind = 5 (all varints;
// proto3 leaves out fields that are zero).
bool decode_token(WireReader r, ScannedToken& out) {
  out = {};
  while (!r.done()) {
    uint64_t key = 0, v = 0;
    if (!r.varint(key)) return false;
    const uint64_t field = key >> 3, type = key & 7;
    if ((field == 1 || field == 4) && type == 0) {
      if (!r.varint(v)) return false;
      const auto value = static_cast<int32_t>(static_cast<uint32_t>(v));
      if (value < 0) return false;
      (field == 1 ? out.start : out.token) = value;
    } else if (!r.skip(type)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool decode_scan_result(const uint8_t* data, size_t size, std::vector<ScannedToken>& out) {
  WireReader r(data, size);
  while (!r.done()) {
    uint64_t key = 0;
    if (!r.varint(key)) return false;
    if ((key >> 3) == 2 && (key & 7) == 2) {
      WireReader token(nullptr, 0);
      ScannedToken t;
      if (!r.bytes(token) || !decode_token(token, t)) return false;
      out.push_back(t);
    } else if (!r.skip(key & 7)) {
      return false;
    }
  }
  return true;
}

ScannedTokens::ScannedTokens(std::string_view sql) : text_size_(sql.size()) {
  const std::string text(sql);
  PgQueryScanResult result = pg_query_scan(text.c_str());
  if (result.error == nullptr) {
    tokens_.reserve(sql.size() / 4 + 1);
    ok_ = decode_scan_result(reinterpret_cast<const uint8_t*>(result.pbuf.data), result.pbuf.len,
                             tokens_);
    // Tokens come in text order, each inside the text.
    for (size_t i = 0; ok_ && i < tokens_.size(); ++i)
      ok_ = static_cast<size_t>(tokens_[i].start) < sql.size() &&
            (i == 0 || tokens_[i].start > tokens_[i - 1].start);
  }
  pg_query_free_scan_result(result);
  if (!ok_) tokens_.clear();
}

}  // namespace kanon::rewriter
