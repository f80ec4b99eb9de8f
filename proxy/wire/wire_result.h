// Result type of the wire codec: a decoded value or a sentence saying why
// the bytes are not a valid message. No exceptions on the data path.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace kanon::wire {

struct WireError {
  std::string message;
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(WireError error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  // REQUIRES: ok().
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  // REQUIRES: !ok().
  const WireError& error() const { return std::get<WireError>(v_); }

 private:
  std::variant<T, WireError> v_;
};

}  // namespace kanon::wire
