#include "web/login_sessions.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <stdexcept>

namespace kanon::web {

std::string random_token() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    throw std::runtime_error("no random bytes for a session token (OpenSSL RAND_bytes failed)");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

namespace {

// Sessions are found by the SHA-256 of their id, so how long a lookup takes
// says nothing about the ids that exist.
std::string digest(std::string_view id) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(id.data()), id.size(), out);
  return std::string(reinterpret_cast<const char*>(out), sizeof out);
}

}  // namespace

bool same_token(std::string_view a, std::string_view b) {
  return a.size() == b.size() && !a.empty() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool LoginSessions::expired(const LoginSession& s, Clock::time_point now) const {
  return now - s.last_used >= timeout_ || now - s.created >= lifetime_;
}

LoginSession LoginSessions::open(const std::string& user, Clock::time_point now,
                                 std::string login_state) {
  LoginSession s{random_token(), random_token(), user, now, now, std::move(login_state), now};
  const std::lock_guard lock(mu_);
  std::erase_if(sessions_, [&](const auto& kv) { return expired(kv.second, now); });
  while (sessions_.size() >= max_) {
    const auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](auto& a, auto& b) {
      return a.second.last_used < b.second.last_used;
    });
    sessions_.erase(oldest);
  }
  sessions_.emplace(digest(s.id), s);
  return s;
}

std::optional<LoginSession> LoginSessions::touch(std::string_view id, Clock::time_point now) {
  const std::lock_guard lock(mu_);
  const auto it = sessions_.find(digest(id));
  if (it == sessions_.end()) return std::nullopt;
  if (expired(it->second, now)) {
    sessions_.erase(it);
    return std::nullopt;
  }
  it->second.last_used = now;
  return it->second;
}

void LoginSessions::close(std::string_view id) {
  const std::lock_guard lock(mu_);
  if (const auto it = sessions_.find(digest(id)); it != sessions_.end()) sessions_.erase(it);
}

void LoginSessions::confirmed(std::string_view id, Clock::time_point now) {
  const std::lock_guard lock(mu_);
  if (const auto it = sessions_.find(digest(id)); it != sessions_.end()) it->second.confirmed = now;
}

size_t LoginSessions::size() const {
  const std::lock_guard lock(mu_);
  return sessions_.size();
}

std::chrono::milliseconds FailedLogins::begin(const std::string& address, Clock::time_point now) {
  const std::lock_guard lock(mu_);
  // Forget addresses whose pause is long over, so the map stays small.
  std::erase_if(counts_, [&](const auto& kv) {
    return kv.second.in_flight == 0 && now - kv.second.last > 10 * pause_;
  });
  Count& c = counts_[address];
  if (c.failures >= limit_) {
    const auto left = c.last + pause_ - now;
    if (left > Clock::duration::zero()) return std::chrono::ceil<std::chrono::milliseconds>(left);
    // The pause is over: one attempt at a time, each failure a new pause.
    if (c.in_flight > 0) return pause_;
  } else if (c.failures + c.in_flight >= limit_) {
    // The attempts in flight may all fail: they count as failures now.
    return pause_;
  }
  ++c.in_flight;
  return std::chrono::milliseconds(0);
}

void FailedLogins::failed(const std::string& address, Clock::time_point now) {
  const std::lock_guard lock(mu_);
  Count& c = counts_[address];
  if (c.in_flight > 0) --c.in_flight;
  ++c.failures;
  c.last = now;
}

void FailedLogins::succeeded(const std::string& address) {
  const std::lock_guard lock(mu_);
  const auto it = counts_.find(address);
  if (it == counts_.end()) return;
  if (it->second.in_flight > 0) --it->second.in_flight;
  it->second.failures = 0;
  if (it->second.in_flight == 0) counts_.erase(it);
}

}  // namespace kanon::web
