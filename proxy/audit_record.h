// AuditRecord: what the audit trail keeps of one statement of a restricted
// session (one Query message, one Execute, one denied Parse or one
// FunctionCall; see docs/proxy.md#audit-trail), and its JSON form.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kanon::proxy {

// Who sent the statements: shared by every record of a session.
struct AuditSession {
  std::string user;
  std::string database;
  std::string client;  // "address:port"
  std::string application;
  int32_t backend_pid = 0;
};

// kExempt: a session relayed untouched, recorded with audit.exempt: true.
enum class AuditDecision { kPassed, kRewritten, kDenied, kExempt };
const char* to_string(AuditDecision decision);

struct AuditRecord {
  std::chrono::system_clock::time_point time;  // when kanon received the message
  std::shared_ptr<const AuditSession> session;
  const char* protocol = "simple";  // simple, extended, function-call
  uint64_t fingerprint = 0;         // of the normalized statement (no literals); 0: none
  std::optional<std::string> text;  // the client's text; nullopt with audit.text: none
  AuditDecision decision = AuditDecision::kPassed;
  std::string rule;                 // kDenied: the rule's id
  std::string object;               // kDenied: what the rule names
  std::vector<std::string> tables;  // protected tables the masks read
  uint64_t snapshot_version = 0;    // the policy snapshot the decision used
  std::optional<uint64_t> rows;     // from CommandComplete; nullopt when none had a count
  double duration_ms = 0;           // receipt to the CommandComplete/ReadyForQuery that ends it
  std::string sqlstate;             // the error the client got; empty: none
};

// "2026-11-22T08:20:01.123Z"
std::string iso8601_ms(std::chrono::system_clock::time_point t);
// The fingerprint as 16 hex digits.
std::string fingerprint_hex(uint64_t fingerprint);

// One line of the JSON-lines file, ending in a newline: the members in a
// fixed order, absent values null, text as base::json_text() writes it.
std::string json_line(const AuditRecord& record);
// json_line() appended to `out`.
void append_json_line(std::string& out, const AuditRecord& record);

// The row count of a CommandComplete tag ("SELECT 5", "INSERT 0 2", "COPY 7");
// nullopt for tags without one ("SET", "BEGIN").
std::optional<uint64_t> rows_of_tag(std::string_view tag);

}  // namespace kanon::proxy
