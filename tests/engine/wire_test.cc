// engine/mpi/wire.h: little-endian bytes whatever the host, and round trips.
#include "engine/mpi/wire.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

namespace kanon::engine::mpi {

TEST_CASE("integers are written little-endian") {
  Writer w;
  w.u64(0x0102030405060708ull);
  CHECK(w.data == std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  w.data.clear();
  w.f64(1.0);  // IEEE 754: 0x3FF0000000000000
  CHECK(w.data == std::string("\x00\x00\x00\x00\x00\x00\xF0\x3F", 8));
}

TEST_CASE("round trip and truncation") {
  Writer w;
  w.u64(0);
  w.u64(~0ull);
  w.f64(-2.5);
  w.f64(std::numeric_limits<double>::infinity());
  w.str("");
  w.str(std::string("a\0b", 3));
  Reader r(w.data);
  CHECK(r.u64() == 0);
  CHECK(r.u64() == ~0ull);
  CHECK(r.f64() == -2.5);
  CHECK(std::isinf(r.f64()));
  CHECK(r.str().empty());
  CHECK(r.str() == std::string("a\0b", 3));
  CHECK(r.done());
  CHECK_THROWS_AS(r.u64(), std::runtime_error);
  Reader short_string(std::string_view(w.data).substr(0, w.data.size() - 1));
  for (int i = 0; i < 5; ++i) short_string.u64();
  CHECK_THROWS_WITH(short_string.str(), "truncated MPI message");
}

}  // namespace kanon::engine::mpi
