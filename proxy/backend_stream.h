// BackendStream: the protocol state of what one backend connection sends to
// its client. It owns no socket: the session feeds it each frame and is told
// whether to forward the frame unchanged or to send a replacement instead.
//
// During start-up it swaps the backend's BackendKeyData for a client key
// from the CancelRegistry; it remembers whether the server ended the session
// with a FATAL error, so the session does not report a second one. It drops
// SCRAM's channel-binding mechanisms (-PLUS) from the server's offer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "proxy/cancel_registry.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/framing.h"

namespace kanon::proxy {

class BackendStream {
 public:
  enum class Phase { kStartup, kReady };
  enum class Verdict { kForward, kReplace, kMalformed };

  explicit BackendStream(CancelRegistry& registry) : registry_(registry) {}
  ~BackendStream();
  BackendStream(const BackendStream&) = delete;
  BackendStream& operator=(const BackendStream&) = delete;

  // REQUIRES: frame.status == kFrame. On kReplace the client gets
  // replacement() instead of the frame.
  Verdict on_frame(const wire::Frame& frame);
  const wire::Buffer& replacement() const { return replacement_; }

  Phase phase() const { return phase_; }
  // True once the server sent an ErrorResponse with severity FATAL or PANIC.
  bool ended_with_fatal() const { return fatal_; }
  const std::optional<wire::BackendKeyData>& backend_key() const { return backend_key_; }
  // As the server last reported it. The rewriter parses with it on; a
  // restricted session that turns it off gets every statement denied.
  bool standard_conforming_strings() const { return standard_conforming_strings_; }
  // The transaction status of the last ReadyForQuery ('I', 'T' or 'E'; 0
  // before the first).
  char transaction_status() const { return transaction_status_; }
  // ReadyForQuery messages so far (1 once start-up is over), and the ordinal
  // of the last one that said 'I' (0: none yet). A ParameterStatus comes
  // before the ReadyForQuery of the cycle that changed the setting.
  uint64_t ready_count() const { return ready_count_; }
  uint64_t last_idle_ready() const { return last_idle_ready_; }
  // The last ReadyForQuery never reached the client (the failed attempt of
  // a cycle kanon sends again): not counted, so the count stays in step
  // with StatementGate's cycles. The one before it said 'I'.
  void forget_ready() {
    if (ready_count_ > 0) --ready_count_;
    last_idle_ready_ = std::min(last_idle_ready_, ready_count_);
  }
  // client_encoding and server_encoding as the server last reported them,
  // and client_encoding as it was when start-up ended (what RESET, RESET ALL
  // and DISCARD ALL return to); empty before the server reported them.
  const std::string& client_encoding() const { return client_encoding_; }
  const std::string& server_encoding() const { return server_encoding_; }
  const std::string& startup_client_encoding() const { return startup_client_encoding_; }

 private:
  CancelRegistry& registry_;
  Phase phase_ = Phase::kStartup;
  bool fatal_ = false;
  bool standard_conforming_strings_ = true;
  char transaction_status_ = 0;
  uint64_t ready_count_ = 0;
  uint64_t last_idle_ready_ = 0;
  std::string client_encoding_;
  std::string server_encoding_;
  std::string startup_client_encoding_;
  std::optional<wire::BackendKeyData> backend_key_;
  std::optional<wire::BackendKeyData> client_key_;
  wire::Buffer replacement_;
};

}  // namespace kanon::proxy
