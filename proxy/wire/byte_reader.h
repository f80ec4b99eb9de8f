// ByteReader: bounds-checked reads of protocol fields from one message body.
//
// Every read either succeeds and advances, or fails and leaves the position
// where it was; nothing is ever read past the end of the span. Integers are
// big-endian (network order), as everywhere in the PostgreSQL protocol.
// Decoders finish with at_end() so that a body is consumed exactly.
//
// The reader borrows the span; it does not own or copy the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/wire/framing.h"

namespace kanon::wire {

class ByteReader {
 public:
  explicit ByteReader(Bytes data) : data_(data) {}

  [[nodiscard]] bool read_u8(uint8_t& out);
  [[nodiscard]] bool read_i8(int8_t& out);
  [[nodiscard]] bool read_char(char& out);
  [[nodiscard]] bool read_u16(uint16_t& out);
  [[nodiscard]] bool read_i16(int16_t& out);
  [[nodiscard]] bool read_u32(uint32_t& out);
  [[nodiscard]] bool read_i32(int32_t& out);
  // A NUL-terminated string; the NUL is consumed but not part of `out`.
  // Fails when no NUL follows before the end.
  [[nodiscard]] bool read_cstring(std::string& out);
  // As above, without copying: `out` points into the span.
  [[nodiscard]] bool read_cstring(std::string_view& out);
  // Exactly `n` bytes; `out` points into the span.
  [[nodiscard]] bool read_bytes(size_t n, Bytes& out);
  // Everything that is left (possibly nothing); always succeeds.
  Bytes read_rest();

  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }
  size_t position() const { return pos_; }

 private:
  Bytes data_;
  size_t pos_ = 0;
};

}  // namespace kanon::wire
