// OutBatch: what one pump sends its peer for one batch of frames read, in
// order, as one gather write: ranges of the bytes read (forwarded as they
// came) and kanon's own bytes (replacements, copied in). The read bytes must
// stay where they are until the write is done (ReceiveBuffer: consume after
// it). Keeps its memory between batches. No sockets.
#pragma once

#include <boost/asio/buffer.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kanon::proxy {

class OutBatch {
 public:
  void clear() {
    own_.clear();
    pieces_.clear();
  }
  bool empty() const { return pieces_.empty(); }
  // The read bytes [offset, offset + size) (offsets from the start of the
  // pending input); adjacent ranges merge.
  void forward(size_t offset, size_t size) {
    if (!pieces_.empty() && !pieces_.back().own &&
        pieces_.back().offset + pieces_.back().size == offset)
      pieces_.back().size += size;
    else
      pieces_.push_back({false, offset, size});
  }
  void add(std::span<const uint8_t> bytes) {
    pieces_.push_back({true, own_.size(), bytes.size()});
    own_.insert(own_.end(), bytes.begin(), bytes.end());
  }
  // The buffers to write, `input` being the pending input's first byte.
  const std::vector<boost::asio::const_buffer>& buffers(const uint8_t* input) {
    buffers_.clear();
    for (const Piece& p : pieces_)
      buffers_.emplace_back((p.own ? own_.data() : input) + p.offset, p.size);
    return buffers_;
  }

 private:
  struct Piece {
    bool own;  // in own_, else in the input
    size_t offset, size;
  };
  std::vector<uint8_t> own_;
  std::vector<Piece> pieces_;
  std::vector<boost::asio::const_buffer> buffers_;
};

}  // namespace kanon::proxy
