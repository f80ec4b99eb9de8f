#include "proxy/wire/framing.h"

#include <doctest/doctest.h>

using namespace kanon::wire;

TEST_CASE("frame_typed rejects a length beyond the maximum before the body arrives") {
  const uint8_t header[] = {'Q', 0x7f, 0xff, 0xff, 0xff};
  const Frame f = frame_typed(Bytes(header), 1 << 20);
  CHECK(f.status == FrameStatus::kMalformed);
}

TEST_CASE("frame_typed answers NeedMore until the whole message is there") {
  const uint8_t msg[] = {'Q', 0, 0, 0, 6, 'x', 0};
  for (size_t cut = 0; cut < sizeof msg; ++cut)
    CHECK(frame_typed(Bytes(msg, cut), 1024).status == FrameStatus::kNeedMore);
  const Frame f = frame_typed(Bytes(msg), 1024);
  REQUIRE(f.status == FrameStatus::kFrame);
  CHECK(f.type == 'Q');
  CHECK(f.size == sizeof msg);
  CHECK(f.body.size() == 2);
}
