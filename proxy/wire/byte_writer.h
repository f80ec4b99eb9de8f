// ByteWriter: appends big-endian protocol fields to a Buffer and frames them.
//
//   ByteWriter w(out);
//   w.begin_message('Q');     // type byte + length placeholder
//   w.write_cstring(sql);
//   w.end_message();          // patches the length to cover what was written
//
// begin_startup() does the same for untyped start-up packets. One message is
// open at a time. The writer borrows `out` and only ever appends to it, so
// several messages can be written one after the other into the same buffer.
//
// Strings are written up to their first NUL byte: the protocol has no way to
// carry an embedded NUL in a String field, and cutting there keeps the frame
// well formed instead of letting the NUL end the field early.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proxy/wire/framing.h"

namespace kanon::wire {

class ByteWriter {
 public:
  explicit ByteWriter(Buffer& out) : out_(out) {}
  ByteWriter(const ByteWriter&) = delete;
  ByteWriter& operator=(const ByteWriter&) = delete;

  // REQUIRES: no message is open.
  void begin_message(char type) {
    assert(length_at_ == kNone);
    out_.push_back(static_cast<uint8_t>(type));
    begin_startup();
  }
  // REQUIRES: no message is open.
  void begin_startup() {
    assert(length_at_ == kNone);
    length_at_ = out_.size();
    write_u32(0);
  }
  // Patches the length field of the open message (it counts itself but not
  // the type byte). REQUIRES: a message is open; its length fits in int32.
  void end_message() {
    assert(length_at_ != kNone);
    const size_t length = out_.size() - length_at_;
    assert(length <= 0x7fffffff);
    const auto n = static_cast<uint32_t>(length);
    out_[length_at_] = static_cast<uint8_t>(n >> 24);
    out_[length_at_ + 1] = static_cast<uint8_t>(n >> 16);
    out_[length_at_ + 2] = static_cast<uint8_t>(n >> 8);
    out_[length_at_ + 3] = static_cast<uint8_t>(n);
    length_at_ = kNone;
  }

  void write_u8(uint8_t v) { out_.push_back(v); }
  void write_i8(int8_t v) { write_u8(static_cast<uint8_t>(v)); }
  void write_char(char c) { write_u8(static_cast<uint8_t>(c)); }
  void write_u16(uint16_t v) {
    out_.push_back(static_cast<uint8_t>(v >> 8));
    out_.push_back(static_cast<uint8_t>(v));
  }
  void write_i16(int16_t v) { write_u16(static_cast<uint16_t>(v)); }
  void write_u32(uint32_t v) {
    out_.push_back(static_cast<uint8_t>(v >> 24));
    out_.push_back(static_cast<uint8_t>(v >> 16));
    out_.push_back(static_cast<uint8_t>(v >> 8));
    out_.push_back(static_cast<uint8_t>(v));
  }
  void write_i32(int32_t v) { write_u32(static_cast<uint32_t>(v)); }
  // Writes `s` up to its first NUL, then a NUL terminator.
  void write_cstring(std::string_view s) {
    s = s.substr(0, s.find('\0'));
    out_.insert(out_.end(), s.begin(), s.end());
    out_.push_back(0);
  }
  void write_bytes(Bytes b) { out_.insert(out_.end(), b.begin(), b.end()); }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  Buffer& out_;
  size_t length_at_ = kNone;
};

}  // namespace kanon::wire
