#include "proxy/audit_record.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <charconv>

namespace kanon::proxy {

const char* to_string(AuditDecision decision) {
  switch (decision) {
    case AuditDecision::kPassed:
      return "passed";
    case AuditDecision::kRewritten:
      return "rewritten";
    case AuditDecision::kDenied:
      return "denied";
  }
  return "denied";
}

std::string iso8601_ms(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::floor<std::chrono::milliseconds>(t);
  const auto s = std::chrono::floor<std::chrono::seconds>(ms);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", s, (ms - s).count());
}

std::string fingerprint_hex(uint64_t fingerprint) {
  return fmt::format("{:016x}", fingerprint);
}

base::Json to_json(const AuditRecord& r) {
  using base::Json;
  static const AuditSession kNobody;
  const AuditSession& s = r.session ? *r.session : kNobody;
  const auto text_or_null = [](const std::string& v) { return v.empty() ? Json() : Json(v); };
  Json j = Json::object();
  j["time"] = iso8601_ms(r.time);
  j["user"] = s.user;
  j["database"] = s.database;
  j["client"] = s.client;
  j["application_name"] = s.application;
  j["backend_pid"] = s.backend_pid;
  j["protocol"] = r.protocol;
  j["fingerprint"] = r.fingerprint ? Json(fingerprint_hex(r.fingerprint)) : Json();
  j["text"] = r.text ? Json(*r.text) : Json();
  j["decision"] = to_string(r.decision);
  j["rule"] = text_or_null(r.rule);
  j["object"] = text_or_null(r.object);
  j["tables"] = r.tables;
  j["snapshot_version"] = r.snapshot_version;
  j["rows"] = r.rows ? Json(*r.rows) : Json();
  j["duration_ms"] = base::json_number(r.duration_ms, 3);
  j["sqlstate"] = text_or_null(r.sqlstate);
  return j;
}

std::string json_line(const AuditRecord& record) {
  return base::json_text(to_json(record), 0);
}

std::optional<uint64_t> rows_of_tag(std::string_view tag) {
  const size_t space = tag.rfind(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view count = tag.substr(space + 1);
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
  if (count.empty() || ec != std::errc() || end != count.data() + count.size()) return std::nullopt;
  return n;
}

}  // namespace kanon::proxy
