// StartupHandshake: what kanon answers to a client's start-up packets, as a
// state machine over bytes. It owns no socket: the session hands it the
// client's unconsumed bytes and performs the action it returns (write a
// byte, do the TLS handshake, forward a cancel, send a FATAL error, start
// the session), so every start-up rule is tested without the network.
//
//   SSLRequest     answered 'S' (then TLS) when client TLS is configured and
//                  the connection is not TLS yet, else 'N'; bytes the client
//                  sent after it, before reading the answer, are refused
//                  (08P01): they would be read as if they came over TLS.
//   GSSENCRequest  answered 'N', with the same check.
//   CancelRequest  forwarded (no answer), then the connection ends.
//   StartupMessage over capacity: 53300; for the admin database: the
//                  console, unless the user is not in admin.users (28000);
//                  else an ordinary session.
//   anything else  an oversized or malformed packet, a protocol version
//                  other than 3.x: 08P01 "invalid start-up packet: ...".
//
// Which rules apply to a restricted login (replication connections, the
// database) is known only once its roles are: admit_restricted() below.
// Not thread-safe; one per connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/wire/framing.h"
#include "proxy/wire/startup_messages.h"

namespace kanon::proxy {

// A FATAL error for the client, after which the connection is closed.
struct Refusal {
  std::string_view sqlstate;  // a base/sqlstate.h constant
  std::string message;
};

class StartupHandshake {
 public:
  struct Settings {
    bool tls_available = false;  // client TLS is configured
    bool over_capacity = false;  // refuse the StartupMessage with 53300
    uint32_t max_message_size = 64u << 20;
    std::string admin_database = "kanon";
    std::vector<std::string> admin_users;
  };

  enum class Step {
    kNeedMore,  // read more from the client, append, call next() again
    kAnswer,    // write `answer` to the client; when start_tls, do the TLS
                // server handshake, then call tls_established()
    kCancel,    // forward `cancel`; close the connection without an answer
    kRefuse,    // send `refusal` as FATAL; close the connection
    kSession,   // start an ordinary session with `startup`
    kConsole,   // start an admin console session with `startup`
  };

  struct Action {
    Step step = Step::kNeedMore;
    // Bytes of next()'s input this action used up; the rest stays pending
    // (for kSession/kConsole: what the client sent after its StartupMessage).
    size_t consumed = 0;
    uint8_t answer = 0;
    bool start_tls = false;
    wire::CancelRequest cancel;
    Refusal refusal;
    wire::StartupMessage startup;
    // kSession/kConsole: the login and its database (the login's name when
    // the client named none, as PostgreSQL does).
    std::string user;
    std::string database;
  };

  explicit StartupHandshake(Settings settings) : settings_(std::move(settings)) {}

  // `pending`: every byte received from the client that no earlier action
  // consumed. REQUIRES: not done(), and no TLS handshake outstanding.
  Action next(wire::Bytes pending);
  // The TLS handshake an kAnswer asked for succeeded.
  void tls_established();

  bool tls() const { return tls_; }
  // A kCancel, kRefuse, kSession or kConsole was returned.
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kPackets, kTlsHandshake, kDone };

  Action finish(Action action);
  Action refuse(std::string_view sqlstate, std::string message);
  Action start(wire::StartupMessage startup, size_t consumed);

  Settings settings_;
  State state_ = State::kPackets;
  bool tls_ = false;
};

// For a restricted login, after the handshake: a refusal when it asks for
// a replication connection (any `replication` parameter) or for a database
// no policy names (`database_protected` false) and not listed under
// databases:.
struct Admission {
  std::optional<Refusal> refusal;
  // With a refusal, for the log: the kanon rule and what it refused.
  std::string_view rule;
  std::string object;
  // The session's database is one kanon protects (not a listed one).
  bool protected_database = true;
};
Admission admit_restricted(const wire::StartupMessage& startup, const std::string& database,
                           bool database_protected,
                           const std::vector<std::string>& listed_databases);

}  // namespace kanon::proxy
