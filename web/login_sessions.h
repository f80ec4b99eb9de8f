// LoginSessions: the web console's logins. A successful login gets a
// session id (the cookie) and a CSRF token (sent back in a header with every
// POST); both are 32 random bytes from OpenSSL, hex. A session ends after
// `timeout` without a request, after `lifetime` in any case, or at logout.
// At most `max_sessions` live at once: the least recently used goes first.
// Thread-safe; the clock is passed in so tests need no waiting.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace kanon::web {

using Clock = std::chrono::steady_clock;

struct LoginSession {
  std::string id;    // the cookie's value
  std::string csrf;  // the X-CSRF-Token every POST must carry
  std::string user;
  Clock::time_point created, last_used;
  // The role's login as PostgreSQL had it at login (password_check.h's
  // login_state), and when it was last found unchanged.
  std::string login_state;
  Clock::time_point confirmed;
};

class LoginSessions {
 public:
  LoginSessions(std::chrono::milliseconds timeout, std::chrono::milliseconds lifetime,
                size_t max_sessions = 64)
      : timeout_(timeout), lifetime_(lifetime), max_(max_sessions) {}

  LoginSession open(const std::string& user, Clock::time_point now, std::string login_state = {});
  // The live session of `id`, its last use set to `now`; nullopt when there
  // is none or it expired (then it is removed).
  std::optional<LoginSession> touch(std::string_view id, Clock::time_point now);
  void close(std::string_view id);
  // The role's login was found unchanged at `now`.
  void confirmed(std::string_view id, Clock::time_point now);
  size_t size() const;
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  bool expired(const LoginSession& s, Clock::time_point now) const;

  const std::chrono::milliseconds timeout_, lifetime_;
  const size_t max_;
  mutable std::mutex mu_;
  std::map<std::string, LoginSession> sessions_;  // by the SHA-256 of the id
};

// Failed logins per client address: after `limit` failures in a row, the
// address is refused for `pause` (each further failure restarts the pause),
// so passwords cannot be guessed at the rate the backend answers. A success
// clears the address's failures. An attempt counts from `begin`, before the
// backend is asked: attempts still in flight count as failures, so logins
// sent at once are limited as logins sent one after another are. Once the
// pause is over, one attempt at a time may begin until one succeeds.
// Thread-safe; the clock is passed in.
class FailedLogins {
 public:
  FailedLogins(size_t limit = 5, std::chrono::milliseconds pause = std::chrono::seconds(30))
      : limit_(limit), pause_(pause) {}

  // Begins an attempt from `address`: zero when it may go ahead (then
  // `failed` or `succeeded` must follow), else how long to wait.
  std::chrono::milliseconds begin(const std::string& address, Clock::time_point now);
  // The end of an attempt that `begin` let go ahead.
  void failed(const std::string& address, Clock::time_point now);
  void succeeded(const std::string& address);

 private:
  struct Count {
    size_t failures = 0;
    size_t in_flight = 0;
    Clock::time_point last;
  };
  const size_t limit_;
  const std::chrono::milliseconds pause_;
  std::mutex mu_;
  std::map<std::string, Count> counts_;
};

// 32 random bytes as 64 hex digits; throws when OpenSSL has no entropy.
std::string random_token();
// Compares in time that does not depend on where they differ.
bool same_token(std::string_view a, std::string_view b);

}  // namespace kanon::web
