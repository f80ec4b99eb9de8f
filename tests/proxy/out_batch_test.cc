// OutBatch: a batch's forwarded ranges and kanon's own bytes come out in
// order, adjacent ranges as one buffer, own bytes copied (the replacement
// they came from may change before the write).
#include "proxy/out_batch.h"

#include <doctest/doctest.h>

#include <string>

using kanon::proxy::OutBatch;

namespace {

std::string written(const std::vector<boost::asio::const_buffer>& buffers) {
  std::string out;
  for (const auto& b : buffers) out.append(static_cast<const char*>(b.data()), b.size());
  return out;
}

}  // namespace

TEST_CASE("OutBatch: forwarded ranges and own bytes in order, adjacent ranges merged") {
  const std::string input = "AAABBBCCCDDD";
  const auto* in = reinterpret_cast<const uint8_t*>(input.data());
  OutBatch batch;
  CHECK(batch.empty());
  batch.forward(0, 3);
  batch.forward(3, 3);  // adjacent: one buffer
  std::vector<uint8_t> replacement = {'x', 'y'};
  batch.add(replacement);
  replacement.assign({'?', '?'});  // copied: later changes do not show
  batch.forward(9, 3);             // CCC dropped
  const auto& buffers = batch.buffers(in);
  CHECK(buffers.size() == 3);
  CHECK(written(buffers) == "AAABBBxyDDD");
  batch.clear();
  CHECK(batch.empty());
  batch.add(replacement);
  CHECK(written(batch.buffers(in)) == "??");
}
