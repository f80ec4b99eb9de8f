// ReceiveBuffer: bytes read from a socket that have not been consumed yet.
// Frames are parsed in place and forwarded straight from here, so relaying a
// message costs no copy. Grows geometrically for large messages (bounded by
// the framer's maximum) and shrinks back once drained.
#pragma once

#include <boost/asio/buffer.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "proxy/wire/framing.h"

namespace kanon::proxy {

class ReceiveBuffer {
 public:
  static constexpr size_t kInitialSize = 64 * 1024;
  static constexpr size_t kMinRead = 16 * 1024;

  ReceiveBuffer() : data_(kInitialSize) {}

  wire::Bytes pending() const { return {data_.data() + start_, end_ - start_}; }
  bool empty() const { return start_ == end_; }

  // Space for the next read, at least kMinRead bytes.
  boost::asio::mutable_buffer prepare() {
    if (data_.size() - end_ < kMinRead) {
      if (start_ > 0) {
        std::memmove(data_.data(), data_.data() + start_, end_ - start_);
        end_ -= start_;
        start_ = 0;
      }
      if (data_.size() - end_ < kMinRead) data_.resize(data_.size() * 2);
    }
    return boost::asio::buffer(data_.data() + end_, data_.size() - end_);
  }
  void commit(size_t n) { end_ += n; }

  void consume(size_t n) {
    start_ += n;
    if (start_ == end_) {
      start_ = end_ = 0;
      if (data_.size() > 16 * kInitialSize) {
        data_.resize(kInitialSize);
        data_.shrink_to_fit();
      }
    }
  }

 private:
  std::vector<uint8_t> data_;
  size_t start_ = 0;
  size_t end_ = 0;
};

}  // namespace kanon::proxy
