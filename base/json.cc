#include "base/json.h"

#include <cmath>
#include <cstdint>

namespace kanon::base {

namespace {

std::string scalar_text(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void write(std::string& out, const Json& v, int depth, int expand) {
  if (!v.is_structured() || v.empty()) {
    out += scalar_text(v);
    return;
  }
  const bool object = v.is_object();
  const bool one_per_line = depth < expand;
  out += object ? '{' : '[';
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) out += ',';
    if (one_per_line) {
      out += '\n';
      out.append(2 * (depth + 1), ' ');
    } else if (!first) {
      out += ' ';
    }
    first = false;
    if (object) {
      out += scalar_text(Json(it.key()));
      out += ": ";
    }
    write(out, it.value(), depth + 1, expand);
  }
  if (one_per_line) {
    out += '\n';
    out.append(2 * depth, ' ');
  }
  out += object ? '}' : ']';
}

}  // namespace

std::string json_text(const Json& value, int expand) {
  std::string out;
  write(out, value, 0, expand);
  return out + '\n';
}

Json json_number(double v, int decimals) {
  if (!std::isfinite(v)) return Json(nullptr);
  if (decimals >= 0) {
    const double scale = std::pow(10.0, decimals);
    v = std::round(v * scale) / scale;
  }
  constexpr double kExact = 9007199254740992.0;  // 2^53: every whole number below is exact
  if (v == std::trunc(v) && std::fabs(v) < kExact) return Json(static_cast<int64_t>(v));
  return Json(v);
}

}  // namespace kanon::base
