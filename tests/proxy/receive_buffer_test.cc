#include "proxy/receive_buffer.h"

#include <doctest/doctest.h>

#include <cstring>

using kanon::proxy::ReceiveBuffer;

namespace {

void append(ReceiveBuffer& buf, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const auto space = buf.prepare();
    const size_t n = std::min(space.size(), bytes.size() - done);
    std::memcpy(space.data(), bytes.data() + done, n);
    buf.commit(n);
    done += n;
  }
}

std::string text(const ReceiveBuffer& buf) {
  const auto p = buf.pending();
  return std::string(reinterpret_cast<const char*>(p.data()), p.size());
}

}  // namespace

TEST_CASE("ReceiveBuffer keeps unconsumed bytes in order across compaction and growth") {
  ReceiveBuffer buf;
  CHECK(buf.empty());
  append(buf, "hello");
  buf.consume(2);
  CHECK(text(buf) == "llo");
  // Far more than the initial capacity, so the buffer compacts and grows.
  std::string big(ReceiveBuffer::kInitialSize * 3, 'x');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  append(buf, big);
  CHECK(text(buf) == "llo" + big);
  buf.consume(3 + big.size());
  CHECK(buf.empty());
  CHECK(buf.prepare().size() >= ReceiveBuffer::kMinRead);
}
