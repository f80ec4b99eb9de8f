// EncodingGuard: the client encoding a restricted session's statements are
// read in, and whether kanon may rely on it for the statement at hand. No
// sockets; runs on the session's thread.
//
// PostgreSQL converts each Query and Parse text from the client_encoding in
// force when the message arrives. kanon learns the encoding from the
// server's ParameterStatus (BackendStream), which comes at the end of the
// cycle that changed it; a client can pipeline a statement behind the change
// before then. So:
//
//   - pure-ASCII text reads alike in every encoding kanon accepts (and in
//     those it does not: no byte of it can belong to a multi-byte
//     character): it is decided as it is, whatever the state;
//   - text with a non-ASCII byte is read in the reported encoding
//     (client_text.h: UTF8 and SQL_ASCII as UTF-8 when valid, the
//     ASCII-safe encodings converted to UTF-8) only while the encoding is
//     *settled*, with server_encoding UTF8; otherwise, or when the text does
//     not convert, it is refused (rule client-encoding);
//   - the encoding is *unsettled* from start-up until the first
//     ReadyForQuery, and after kanon forwards a statement that may change it
//     (rewriter/encoding_effect.h: SET, RESET, set_config(), code that is
//     not built in, ...) until the ReadyForQuery that ends that statement's
//     cycle (the cycle StatementGate counts). SET client_encoding to the
//     value in force, or RESET/DISCARD ALL while it is the start-up value,
//     change nothing; COMMIT/ROLLBACK change something only after such a
//     statement in the transaction. A Parse's effect applies again at every
//     Bind of its statement and Execute of the portal, in their cycles.
//
// Rewritten text goes back to the client encoding, and must read back as the
// very text kanon decided (write()).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/backend_stream.h"
#include "proxy/wire/framing.h"
#include "rewriter/encoding_effect.h"

namespace kanon::proxy {

class EncodingGuard {
 public:
  explicit EncodingGuard(const BackendStream& backend) : backend_(backend) {}

  enum class Read {
    kAsIs,       // decide the client's bytes as they are (ASCII, or UTF-8 already)
    kConverted,  // decide `utf8`, the client's text converted
    kRefused,    // deny with rules::kClientEncoding, naming `refusal`
  };
  struct Text {
    Read read = Read::kAsIs;
    std::string utf8;
    std::string refusal;
  };
  // How kanon reads the text of a Query or Parse message now.
  Text read(std::string_view text) const;
  // For a kConverted text: the rewritten UTF-8 text in the client encoding,
  // or nullopt when it does not convert back to exactly `utf8`.
  std::optional<std::string> write(std::string_view utf8) const;
  // One of kanon's messages (UTF-8) in the client encoding, '?' for what it
  // cannot hold.
  std::string message(std::string_view utf8) const;

  // A client frame the gate let through (forwarded or replaced; not dropped).
  // `forwarded`: for a Query or Parse that went to the backend as passed or
  // rewritten, what running it may do to the encoding. `cycle`: the
  // ReadyForQuery ordinal that ends the frame's cycle (StatementGate::cycle()).
  void on_client_frame(const wire::Frame& frame,
                       const std::optional<rewriter::EncodingEffect>& forwarded, uint64_t cycle);

  bool settled() const { return backend_.ready_count() >= unsettled_until_; }

 private:
  bool may_change(const rewriter::EncodingEffect& effect) const;
  void note(const rewriter::EncodingEffect& effect, uint64_t cycle);

  const BackendStream& backend_;
  uint64_t unsettled_until_ = 1;  // start-up's ReadyForQuery comes after its ParameterStatus
  uint64_t changed_at_ = 0;       // the cycle of the last statement that may have changed it
  // Extended protocol: the effect of each prepared statement and portal.
  std::map<std::string, rewriter::EncodingEffect, std::less<>> statements_;
  std::map<std::string, rewriter::EncodingEffect, std::less<>> portals_;
};

}  // namespace kanon::proxy
