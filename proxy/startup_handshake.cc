#include "proxy/startup_handshake.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <variant>

#include "base/sqlstate.h"
#include "rewriter/statement_rules.h"

namespace kanon::proxy {

namespace {

constexpr uint8_t kRefuseEncryption = 'N';
constexpr uint8_t kAcceptEncryption = 'S';

}  // namespace

StartupHandshake::Action StartupHandshake::next(wire::Bytes pending) {
  assert(state_ == State::kPackets);
  const wire::Frame frame = wire::frame_startup(pending, settings_.max_message_size);
  if (frame.status == wire::FrameStatus::kNeedMore) return {};
  if (frame.status == wire::FrameStatus::kMalformed)
    return refuse(sqlstate::kProtocolViolation,
                  fmt::format("invalid start-up packet: {}", frame.error));
  auto packet = wire::decode_startup_packet(frame.body);
  if (!packet.ok())
    return refuse(sqlstate::kProtocolViolation,
                  fmt::format("invalid start-up packet: {}", packet.error().message));

  const bool ssl = std::holds_alternative<wire::SslRequest>(packet.value());
  if (ssl || std::holds_alternative<wire::GssEncRequest>(packet.value())) {
    // A client must wait for the answer: bytes sent after the request would
    // be taken for TLS-protected ones (CVE-2021-23214).
    if (frame.size < pending.size())
      return refuse(sqlstate::kProtocolViolation,
                    "received unencrypted data after an encryption request");
    Action action;
    action.step = Step::kAnswer;
    action.consumed = frame.size;
    action.start_tls = ssl && settings_.tls_available && !tls_;
    action.answer = action.start_tls ? kAcceptEncryption : kRefuseEncryption;
    if (action.start_tls) state_ = State::kTlsHandshake;
    return action;
  }
  if (const auto* cancel = std::get_if<wire::CancelRequest>(&packet.value())) {
    Action action;
    action.step = Step::kCancel;
    action.consumed = frame.size;
    action.cancel = *cancel;
    return finish(std::move(action));
  }
  return start(std::move(std::get<wire::StartupMessage>(packet.value())), frame.size);
}

void StartupHandshake::tls_established() {
  assert(state_ == State::kTlsHandshake);
  tls_ = true;
  state_ = State::kPackets;
}

StartupHandshake::Action StartupHandshake::finish(Action action) {
  state_ = State::kDone;
  return action;
}

StartupHandshake::Action StartupHandshake::refuse(std::string_view sqlstate, std::string message) {
  Action action;
  action.step = Step::kRefuse;
  action.refusal = Refusal{sqlstate, std::move(message)};
  return finish(std::move(action));
}

StartupHandshake::Action StartupHandshake::start(wire::StartupMessage startup, size_t consumed) {
  // As PostgreSQL: encryption and cancel requests are still answered, the
  // session itself is refused.
  if (settings_.over_capacity)
    return refuse(sqlstate::kTooManyConnections, "sorry, too many clients already");
  Action action;
  action.step = Step::kSession;
  action.consumed = consumed;
  if (const std::string* user = startup.find("user")) action.user = *user;
  if (const std::string* database = startup.find("database")) action.database = *database;
  if (action.database.empty()) action.database = action.user;
  if (action.database == settings_.admin_database) {
    const auto& admins = settings_.admin_users;
    if (std::find(admins.begin(), admins.end(), action.user) == admins.end())
      return refuse(sqlstate::kInvalidAuthorizationSpecification,
                    fmt::format("kanon: user \"{}\" may not use the admin console "
                                "(not listed in admin.users)",
                                action.user));
    action.step = Step::kConsole;
  }
  action.startup = std::move(startup);
  return finish(std::move(action));
}

Admission admit_restricted(const wire::StartupMessage& startup, const std::string& database,
                           bool database_protected,
                           const std::vector<std::string>& listed_databases) {
  Admission admission;
  const auto refuse = [&](const rewriter::Rule& rule, std::string object) {
    admission.refusal = Refusal{rule.sqlstate, rewriter::denial_message(rule, object)};
    admission.rule = rule.id;
    admission.object = std::move(object);
    return admission;
  };
  // Any value: a walsender speaks another protocol kanon does not enforce.
  if (startup.find("replication"))
    return refuse(rewriter::rules::kReplicationConnection, "replication");
  // Policies, trees and the catalog belong to a database; one that no
  // policy names is served only when listed.
  if (!database_protected) {
    if (std::find(listed_databases.begin(), listed_databases.end(), database) ==
        listed_databases.end())
      return refuse(rewriter::rules::kDatabaseNotProtected, database);
    admission.protected_database = false;
  }
  return admission;
}

}  // namespace kanon::proxy
