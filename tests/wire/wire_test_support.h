// Helpers shared by the wire codec tests: round trips through the framing,
// split-point checks, and truncation / trailing-garbage checks.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <variant>

#include "proxy/wire/backend_messages.h"
#include "proxy/wire/framing.h"
#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/startup_messages.h"

namespace kanon::wire::testing {

inline constexpr uint32_t kMaxMessage = 1u << 20;

// Bytes written as a string literal, e.g. raw("Q\0\0\0\x05" "x\0"sv).
inline Buffer raw(std::string_view s) {
  return Buffer(s.begin(), s.end());
}

inline std::string text(const Buffer& b) {
  return std::string(b.begin(), b.end());
}

inline bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

template <class T>
Buffer encoded(const T& m) {
  Buffer out;
  encode(m, out);
  return out;
}

// Checks the framing of one encoded message: NeedMore for every proper
// prefix, a whole frame for the whole.
inline Frame check_framing(const Buffer& frame, bool startup) {
  const auto frame_of = [startup](Bytes b) {
    return startup ? frame_startup(b, kMaxMessage) : frame_typed(b, kMaxMessage);
  };
  size_t wrong = 0;
  for (size_t cut = 0; cut < frame.size(); ++cut) {
    // A fresh allocation of exactly `cut` bytes so that ASan sees overreads.
    const Buffer prefix(frame.begin(), frame.begin() + static_cast<ptrdiff_t>(cut));
    if (frame_of(prefix).status != FrameStatus::kNeedMore) ++wrong;
  }
  CHECK_MESSAGE(wrong == 0, "split points not answered with NeedMore: ", wrong);
  const Frame f = frame_of(frame);
  REQUIRE(f.status == FrameStatus::kFrame);
  CHECK(f.size == frame.size());
  return f;
}

// encode -> frame_typed at every split point -> decode; returns the frame.
template <class T, class Decode>
Buffer round_trip(const T& m, Decode decode) {
  const Buffer frame = encoded(m);
  const Frame f = check_framing(frame, /*startup=*/false);
  CHECK(f.type == T::kType);
  const Buffer body(f.body.begin(), f.body.end());
  const auto r = decode(Bytes(body));
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  CHECK(r.value() == m);
  return frame;
}

// The same through the direction's dispatcher.
template <class T>
void round_trip_frontend_dispatch(const T& m) {
  const Buffer frame = encoded(m);
  const Frame f = frame_typed(frame, kMaxMessage);
  REQUIRE(f.status == FrameStatus::kFrame);
  const auto r = decode_frontend_message(f.type, f.body);
  REQUIRE(r.ok());
  REQUIRE(std::holds_alternative<T>(r.value()));
  CHECK(std::get<T>(r.value()) == m);
  Buffer again;
  encode(r.value(), again);
  CHECK(again == frame);
}

template <class T>
void round_trip_backend_dispatch(const T& m) {
  const Buffer frame = encoded(m);
  const Frame f = frame_typed(frame, kMaxMessage);
  REQUIRE(f.status == FrameStatus::kFrame);
  const auto r = decode_backend_message(f.type, f.body);
  REQUIRE(r.ok());
  REQUIRE(std::holds_alternative<T>(r.value()));
  CHECK(std::get<T>(r.value()) == m);
  Buffer again;
  encode(r.value(), again);
  CHECK(again == frame);
}

// Two messages in one buffer frame one after the other.
template <class A, class B>
void check_two_in_one_buffer(const A& a, const B& b) {
  Buffer both;
  encode(a, both);
  const size_t first_size = both.size();
  encode(b, both);
  const Frame f1 = frame_typed(both, kMaxMessage);
  REQUIRE(f1.status == FrameStatus::kFrame);
  CHECK(f1.type == A::kType);
  CHECK(f1.size == first_size);
  const Frame f2 = frame_typed(Bytes(both).subspan(f1.size), kMaxMessage);
  REQUIRE(f2.status == FrameStatus::kFrame);
  CHECK(f2.type == B::kType);
  CHECK(f1.size + f2.size == both.size());
}

// Decoding must fail with an error naming `name` for the body cut short at
// every point and for the body with a byte appended.
template <class T, class Decode>
void check_rejects_damage(const T& m, Decode decode, std::string_view name) {
  const Buffer frame = encoded(m);
  const Frame f = frame_typed(frame, kMaxMessage);
  REQUIRE(f.status == FrameStatus::kFrame);
  for (size_t n = 0; n < f.body.size(); ++n) {
    const Buffer cut(f.body.begin(), f.body.begin() + static_cast<ptrdiff_t>(n));
    const auto r = decode(Bytes(cut));
    CHECK_MESSAGE(!r.ok(), name, " accepted a body cut to ", n, " of ", f.body.size(), " bytes");
    if (!r.ok()) CHECK_MESSAGE(starts_with(r.error().message, name), r.error().message);
  }
  Buffer longer(f.body.begin(), f.body.end());
  longer.push_back('x');
  const auto r = decode(Bytes(longer));
  CHECK_MESSAGE(!r.ok(), name, " accepted trailing garbage");
  if (!r.ok()) CHECK_MESSAGE(starts_with(r.error().message, name), r.error().message);
}

}  // namespace kanon::wire::testing
