// Byte serialization for the MPI messages of distributed.cc: little-endian
// fixed-width integers and doubles, length-prefixed strings.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kanon::engine::mpi {

struct Writer {
  std::string data;
  void u64(uint64_t v) { data.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void f64(double v) { data.append(reinterpret_cast<const char*>(&v), sizeof v); }
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
    uint64_t v;
    copy(&v, sizeof v);
    return v;
  }
  double f64() {
    double v;
    copy(&v, sizeof v);
    return v;
  }
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
  void copy(void* out, size_t n) {
    need(n);
    std::memcpy(out, data_.data() + pos_, n);
    pos_ += n;
  }
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace kanon::engine::mpi
