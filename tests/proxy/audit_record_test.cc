// Audit records without sockets: the JSON line a record becomes (every
// field, nulls, escaping), the row count of CommandComplete tags, and the
// ring SHOW AUDIT reads.
#include "proxy/audit_record.h"

#include <doctest/doctest.h>

#include <chrono>

#include "base/json.h"
#include "proxy/audit_ring.h"

using namespace kanon::proxy;

namespace {

AuditRecord sample() {
  auto session = std::make_shared<AuditSession>();
  session->user = "analyst";
  session->database = "postgres";
  session->client = "127.0.0.1:50412";
  session->application = "psql";
  session->backend_pid = 4242;
  AuditRecord r;
  // 2026-11-22T08:20:01.123Z
  r.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1795335601123));
  r.session = session;
  r.protocol = "extended";
  r.fingerprint = 0x8f0e2c51a9d3b774ULL;
  r.text = "SELECT \"city\" FROM people WHERE name = 'O\\'Brien'\n";
  r.decision = AuditDecision::kRewritten;
  r.tables = {"public.people"};
  r.snapshot_version = 7;
  r.rows = 11;
  r.duration_ms = 1.23456;
  return r;
}

// The record as a base::Json document: the oracle json_line() must match.
kanon::base::Json to_json(const AuditRecord& r) {
  namespace base = kanon::base;
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

}  // namespace

TEST_CASE("a record is one JSON line with every field in a fixed order") {
  CHECK(json_line(sample()) ==
        "{\"time\": \"2026-11-22T08:20:01.123Z\", \"user\": \"analyst\", \"database\": "
        "\"postgres\", \"client\": \"127.0.0.1:50412\", \"application_name\": \"psql\", "
        "\"backend_pid\": 4242, \"protocol\": \"extended\", \"fingerprint\": "
        "\"8f0e2c51a9d3b774\", \"text\": \"SELECT \\\"city\\\" FROM people WHERE name = "
        "'O\\\\'Brien'\\n\", \"decision\": \"rewritten\", \"rule\": null, \"object\": null, "
        "\"tables\": [\"public.people\"], \"snapshot_version\": 7, \"rows\": 11, "
        "\"duration_ms\": 1.235, \"sqlstate\": null}\n");
}

TEST_CASE("a denial names rule and object; missing values are null") {
  AuditRecord r = sample();
  r.decision = AuditDecision::kDenied;
  r.rule = "system-column";
  r.object = "public.people.ctid";
  r.tables.clear();
  r.rows.reset();
  r.text.reset();  // audit.text: none
  r.fingerprint = 0;
  r.sqlstate = "42501";
  r.duration_ms = 2;
  const auto j = to_json(r);
  CHECK(j["decision"] == "denied");
  CHECK(j["rule"] == "system-column");
  CHECK(j["object"] == "public.people.ctid");
  CHECK(j["tables"].is_array());
  CHECK(j["tables"].empty());
  CHECK(j["rows"].is_null());
  CHECK(j["text"].is_null());
  CHECK(j["fingerprint"].is_null());
  CHECK(j["sqlstate"] == "42501");
  CHECK(j["duration_ms"] == 2);
  const std::string line = json_line(r);
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line, whatever the text holds
}

TEST_CASE("json_line writes exactly what base::json_text makes of to_json") {
  std::vector<AuditRecord> records{sample()};
  AuditRecord odd = sample();
  odd.text =
      std::string("tab\there, quote \" backslash \\ bell \x07 \xc3\xa9t\xc3\xa9 bad \xff end");
  odd.session = std::make_shared<AuditSession>(AuditSession{"Ünïcode \"user\"", "db", "", "", 0});
  odd.rule = "rule\nwith newline";
  odd.tables = {"a.b", "c.\"d\""};
  odd.duration_ms = 12345.0;
  odd.rows = 0;
  records.push_back(odd);
  AuditRecord empty;  // no session, no text, nothing decided
  records.push_back(empty);
  AuditRecord small = sample();
  small.duration_ms = 0.0004;  // rounds to 0
  small.fingerprint = 1;
  records.push_back(small);
  for (const auto& r : records) CHECK(json_line(r) == kanon::base::json_text(to_json(r), 0));
  CHECK(json_line(odd).find("\\ufffd") == std::string::npos);  // nlohmann writes U+FFFD raw
  CHECK(json_line(odd).find("\xef\xbf\xbd end") != std::string::npos);
}

TEST_CASE("time is UTC ISO 8601 with milliseconds") {
  const auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(5));
  CHECK(iso8601_ms(t) == "1970-01-01T00:00:00.005Z");
  CHECK(iso8601_ms(t + std::chrono::microseconds(999)) == "1970-01-01T00:00:00.005Z");
}

TEST_CASE("rows come from the CommandComplete tag") {
  CHECK(rows_of_tag("SELECT 5") == 5);
  CHECK(rows_of_tag("INSERT 0 2") == 2);
  CHECK(rows_of_tag("COPY 7") == 7);
  CHECK(rows_of_tag("FETCH 0") == 0);
  CHECK_FALSE(rows_of_tag("SET").has_value());
  CHECK_FALSE(rows_of_tag("CREATE TABLE").has_value());
  CHECK_FALSE(rows_of_tag("").has_value());
  CHECK_FALSE(rows_of_tag("SELECT 5x").has_value());
}

TEST_CASE("the ring keeps the latest records, oldest first") {
  AuditRing ring(3);
  CHECK(ring.latest().empty());
  for (int i = 1; i <= 2; ++i) {
    AuditRecord r;
    r.snapshot_version = i;
    ring.push(r);
  }
  auto got = ring.latest();
  REQUIRE(got.size() == 2);
  CHECK(got[0].snapshot_version == 1);
  CHECK(got[1].snapshot_version == 2);
  for (int i = 3; i <= 7; ++i) {
    AuditRecord r;
    r.snapshot_version = i;
    ring.push(r);
  }
  got = ring.latest();
  REQUIRE(got.size() == 3);
  CHECK(got[0].snapshot_version == 5);
  CHECK(got[1].snapshot_version == 6);
  CHECK(got[2].snapshot_version == 7);
}
