#include "proxy/wire/byte_reader.h"

#include <cstring>

namespace kanon::wire {

bool ByteReader::read_u8(uint8_t& out) {
  if (remaining() < 1) return false;
  out = data_[pos_++];
  return true;
}

bool ByteReader::read_i8(int8_t& out) {
  uint8_t u;
  if (!read_u8(u)) return false;
  out = static_cast<int8_t>(u);
  return true;
}

bool ByteReader::read_char(char& out) {
  uint8_t u;
  if (!read_u8(u)) return false;
  out = static_cast<char>(u);
  return true;
}

bool ByteReader::read_u16(uint16_t& out) {
  if (remaining() < 2) return false;
  out = static_cast<uint16_t>((uint16_t{data_[pos_]} << 8) | uint16_t{data_[pos_ + 1]});
  pos_ += 2;
  return true;
}

bool ByteReader::read_i16(int16_t& out) {
  uint16_t u;
  if (!read_u16(u)) return false;
  out = static_cast<int16_t>(u);
  return true;
}

bool ByteReader::read_u32(uint32_t& out) {
  if (remaining() < 4) return false;
  const uint8_t* p = data_.data() + pos_;
  out = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
  pos_ += 4;
  return true;
}

bool ByteReader::read_i32(int32_t& out) {
  uint32_t u;
  if (!read_u32(u)) return false;
  out = static_cast<int32_t>(u);
  return true;
}

bool ByteReader::read_cstring(std::string_view& out) {
  if (at_end()) return false;
  const uint8_t* start = data_.data() + pos_;
  const void* nul = std::memchr(start, 0, remaining());
  if (nul == nullptr) return false;
  const size_t length = static_cast<size_t>(static_cast<const uint8_t*>(nul) - start);
  out = std::string_view(reinterpret_cast<const char*>(start), length);
  pos_ += length + 1;
  return true;
}

bool ByteReader::read_cstring(std::string& out) {
  std::string_view view;
  if (!read_cstring(view)) return false;
  out.assign(view);
  return true;
}

bool ByteReader::read_bytes(size_t n, Bytes& out) {
  if (remaining() < n) return false;
  out = data_.subspan(pos_, n);
  pos_ += n;
  return true;
}

Bytes ByteReader::read_rest() {
  Bytes rest = data_.subspan(pos_);
  pos_ = data_.size();
  return rest;
}

}  // namespace kanon::wire
