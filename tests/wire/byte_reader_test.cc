#include "proxy/wire/byte_reader.h"

#include <doctest/doctest.h>

#include "proxy/wire/byte_writer.h"
#include "tests/wire/wire_test_support.h"

using namespace kanon::wire;
using namespace kanon::wire::testing;
using namespace std::literals;

TEST_CASE("ByteReader reads big-endian integers") {
  const Buffer b = raw("\x80\xff\xfe\x12\x34\x56\x78\xff\xff\xff\xfe"sv);
  ByteReader r(b);
  int8_t i8;
  uint8_t u8;
  int16_t i16;
  uint32_t u32;
  int32_t i32;
  REQUIRE(r.read_i8(i8));
  CHECK(i8 == -128);
  REQUIRE(r.read_u8(u8));
  CHECK(u8 == 0xff);
  REQUIRE(r.read_i16(i16));
  CHECK(i16 == static_cast<int16_t>(0xfe12));
  REQUIRE(r.read_u32(u32));
  CHECK(u32 == 0x345678ffu);
  CHECK(r.remaining() == 3);
  CHECK_FALSE(r.read_i32(i32));
  CHECK(r.remaining() == 3);  // a failed read does not advance
  CHECK_FALSE(r.at_end());
}

TEST_CASE("ByteReader fails every read at the end instead of reading past it") {
  const Buffer b = raw("ab"sv);
  ByteReader r(Bytes(b).first(1));
  uint16_t u16;
  uint32_t u32;
  std::string s;
  Bytes bytes;
  CHECK_FALSE(r.read_u16(u16));
  CHECK_FALSE(r.read_u32(u32));
  CHECK_FALSE(r.read_cstring(s));
  CHECK_FALSE(r.read_bytes(2, bytes));
  CHECK(r.read_bytes(1, bytes));
  CHECK(bytes.size() == 1);
  CHECK(r.at_end());
  uint8_t u8;
  CHECK_FALSE(r.read_u8(u8));
  CHECK(r.read_rest().empty());
}

TEST_CASE("ByteReader reads NUL-terminated strings") {
  const Buffer b = raw("abc\0\0xyz"sv);
  ByteReader r(b);
  std::string s;
  std::string_view v;
  REQUIRE(r.read_cstring(s));
  CHECK(s == "abc");
  REQUIRE(r.read_cstring(v));
  CHECK(v.empty());
  CHECK(r.position() == 5);
  CHECK_FALSE(r.read_cstring(s));  // "xyz" has no NUL
  CHECK(r.position() == 5);
  CHECK(r.read_rest().size() == 3);
  CHECK(r.at_end());
}

TEST_CASE("ByteReader on an empty span") {
  ByteReader r(Bytes{});
  std::string s;
  Bytes bytes;
  CHECK(r.at_end());
  CHECK_FALSE(r.read_cstring(s));
  CHECK(r.read_bytes(0, bytes));
}

TEST_CASE("ByteWriter writes big-endian fields and patches the length") {
  Buffer out;
  ByteWriter w(out);
  w.begin_message('X');
  w.write_i8(-1);
  w.write_i16(-2);
  w.write_u32(0x01020304);
  w.write_cstring("hi");
  w.end_message();
  CHECK(out == raw("X\0\0\0\x0e\xff\xff\xfe\x01\x02\x03\x04hi\0"sv));
  // A second message goes after the first.
  w.begin_startup();
  w.write_i32(-1);
  w.end_message();
  CHECK(out.size() == 15 + 8);
  CHECK(Buffer(out.begin() + 15, out.end()) == raw("\0\0\0\x08\xff\xff\xff\xff"sv));
}

TEST_CASE("ByteWriter cuts a string at an embedded NUL so the frame stays well formed") {
  Buffer out;
  encode(Query{"SELECT 1\0; DROP TABLE t"s}, out);
  const Frame f = frame_typed(out, kMaxMessage);
  REQUIRE(f.status == FrameStatus::kFrame);
  const auto q = decode_query(f.body);
  REQUIRE(q.ok());
  CHECK(q.value().sql == "SELECT 1");
}
