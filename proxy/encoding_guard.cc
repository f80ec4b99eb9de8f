#include "proxy/encoding_guard.h"

#include <fmt/format.h>

#include <algorithm>

#include "proxy/client_text.h"
#include "proxy/wire/message_types.h"

namespace kanon::proxy {
namespace {

using Kind = rewriter::EncodingEffect::Kind;

// The NUL-terminated string at `*at` in `body`; moves *at past it.
std::string_view cstring(wire::Bytes body, size_t* at) {
  const auto* begin = reinterpret_cast<const char*>(body.data()) + *at;
  size_t n = 0;
  while (*at + n < body.size() && begin[n] != '\0') ++n;
  *at = std::min(body.size(), *at + n + 1);
  return {begin, n};
}

bool same_encoding(std::string_view a, std::string_view b) {
  const auto x = find_encoding(a);
  const auto y = find_encoding(b);
  return x && y && *x == *y;
}

}  // namespace

EncodingGuard::Text EncodingGuard::read(std::string_view text) const {
  Text t;
  if (is_ascii(text)) return t;
  t.read = Read::kRefused;
  if (!settled()) {
    t.refusal =
        "client_encoding, while a statement that may change it has not finished (send the "
        "statement again once it has)";
    return t;
  }
  const auto server = find_encoding(backend_.server_encoding());
  if (!server || server->support != EncodingSupport::kUtf8) {
    t.refusal = fmt::format("server_encoding {}", backend_.server_encoding());
    return t;
  }
  const auto client = find_encoding(backend_.client_encoding());
  if (!client) {
    t.refusal = fmt::format("client_encoding {}", backend_.client_encoding());
    return t;
  }
  switch (client->support) {
    case EncodingSupport::kUtf8:
    case EncodingSupport::kSqlAscii:
      if (is_valid_utf8(text)) {
        t.read = Read::kAsIs;
      } else {
        t.refusal = fmt::format("text that is not valid UTF-8 (client_encoding {})", client->name);
      }
      return t;
    case EncodingSupport::kConverted:
      if (auto utf8 = to_utf8(text, *client)) {
        t.read = Read::kConverted;
        t.utf8 = std::move(*utf8);
      } else {
        t.refusal = fmt::format("text that is not valid {} (client_encoding)", client->name);
      }
      return t;
    case EncodingSupport::kAsciiOnly:
      break;
  }
  t.refusal = fmt::format("client_encoding {}", client->name);
  return t;
}

std::optional<std::string> EncodingGuard::write(std::string_view utf8) const {
  const auto client = find_encoding(backend_.client_encoding());
  if (!client || client->support != EncodingSupport::kConverted) return std::nullopt;
  auto back = from_utf8(utf8, *client);
  // The server converts what it gets with the same mapping (checked by
  // proxy_encoding_test): it must read exactly the text kanon decided.
  if (!back) return std::nullopt;
  const auto again = to_utf8(*back, *client);
  if (!again || *again != utf8) return std::nullopt;
  return back;
}

std::string EncodingGuard::message(std::string_view utf8) const {
  if (is_ascii(utf8)) return std::string(utf8);
  const auto client = find_encoding(backend_.client_encoding());
  return from_utf8_lossy(utf8, client ? *client : ClientEncoding{});
}

bool EncodingGuard::may_change(const rewriter::EncodingEffect& effect) const {
  if (effect.kind == Kind::kNone) return false;
  if (!settled()) return true;  // what it is now is not known
  switch (effect.kind) {
    case Kind::kSet:
      return !same_encoding(effect.value, backend_.client_encoding());
    case Kind::kReset:
      return !same_encoding(backend_.startup_client_encoding(), backend_.client_encoding());
    case Kind::kTransactionEnd:
      // Undoes what the transaction changed: only a change since the
      // session was last idle outside a transaction block.
      return changed_at_ > backend_.last_idle_ready();
    default:
      return true;
  }
}

void EncodingGuard::note(const rewriter::EncodingEffect& effect, uint64_t cycle) {
  if (!may_change(effect)) return;
  unsettled_until_ = std::max(unsettled_until_, cycle);
  changed_at_ = std::max(changed_at_, cycle);
}

void EncodingGuard::on_client_frame(const wire::Frame& frame,
                                    const std::optional<rewriter::EncodingEffect>& forwarded,
                                    uint64_t cycle) {
  size_t at = 0;
  switch (frame.type) {
    case wire::frontend::kQuery:
      if (forwarded) note(*forwarded, cycle);
      return;
    case wire::frontend::kParse: {
      const std::string_view name = cstring(frame.body, &at);
      if (forwarded && forwarded->kind != Kind::kNone) {
        note(*forwarded, cycle);
        statements_.insert_or_assign(std::string(name), *forwarded);
      } else if (const auto it = statements_.find(name); it != statements_.end()) {
        statements_.erase(it);
      }
      return;
    }
    case wire::frontend::kBind: {
      const std::string_view portal = cstring(frame.body, &at);
      const std::string_view statement = cstring(frame.body, &at);
      const auto it = statements_.find(statement);
      if (it == statements_.end()) {
        if (const auto p = portals_.find(portal); p != portals_.end()) portals_.erase(p);
        return;
      }
      note(it->second, cycle);  // Bind runs input functions (domain checks)
      portals_.insert_or_assign(std::string(portal), it->second);
      return;
    }
    case wire::frontend::kExecute: {
      const std::string_view portal = cstring(frame.body, &at);
      if (const auto it = portals_.find(portal); it != portals_.end()) note(it->second, cycle);
      return;
    }
    case wire::frontend::kClose: {
      if (frame.body.empty()) return;
      const char what = static_cast<char>(frame.body[0]);
      at = 1;
      const std::string_view name = cstring(frame.body, &at);
      auto& map = what == 'S' ? statements_ : portals_;
      if (const auto it = map.find(name); it != map.end()) map.erase(it);
      return;
    }
    default:
      return;
  }
}

}  // namespace kanon::proxy
