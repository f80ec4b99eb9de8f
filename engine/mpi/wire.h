// Byte serialization for the MPI messages of distributed.cc: fixed-width
// integers and doubles written little-endian byte by byte (whatever the
// host's byte order), length-prefixed strings.
#pragma once

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kanon::engine::mpi {

struct Writer {
  std::string data;
  void u64(uint64_t v) {
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(v >> (8 * i));
    data.append(bytes, sizeof bytes);
  }
  void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
  void str(std::string_view s) {
    u64(s.size());
    data.append(s);
  }
};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t{static_cast<unsigned char>(data_[pos_ + i])} << (8 * i);
    pos_ += 8;
    return v;
  }
  double f64() { return std::bit_cast<double>(u64()); }
  std::string str() {
    const uint64_t n = u64();
    need(n);
    std::string s(data_.substr(pos_, n));
    pos_ += n;
    return s;
  }

 private:
  void need(uint64_t n) const {
    if (n > data_.size() - pos_) throw std::runtime_error("truncated MPI message");
  }
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace kanon::engine::mpi
