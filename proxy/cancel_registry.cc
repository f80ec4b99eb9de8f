#include "proxy/cancel_registry.h"

#include <sys/random.h>

#include <stdexcept>

namespace kanon::proxy {
namespace {

uint64_t random_u64() {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v))
    throw std::runtime_error("getrandom failed");
  return v;
}

}  // namespace

wire::BackendKeyData CancelRegistry::fresh_key_locked() const {
  for (;;) {
    const uint64_t r = random_u64();
    // Keep process ids positive: some drivers store them in a signed int.
    wire::BackendKeyData key{static_cast<uint32_t>(r >> 33) | 1u, static_cast<uint32_t>(r)};
    if (!keys_.count(pack(key)) && !local_.count(pack(key))) return key;
  }
}

wire::BackendKeyData CancelRegistry::add(const wire::BackendKeyData& backend_key) {
  const std::lock_guard lock(mutex_);
  const auto client_key = fresh_key_locked();
  keys_.emplace(pack(client_key), backend_key);
  return client_key;
}

wire::BackendKeyData CancelRegistry::add_local(std::shared_ptr<std::atomic<bool>> flag) {
  const std::lock_guard lock(mutex_);
  const auto client_key = fresh_key_locked();
  local_.emplace(pack(client_key), std::move(flag));
  return client_key;
}

bool CancelRegistry::cancel_local(const wire::BackendKeyData& client_key) {
  const std::lock_guard lock(mutex_);
  const auto it = local_.find(pack(client_key));
  if (it == local_.end()) return false;
  it->second->store(true);
  return true;
}

void CancelRegistry::remove(const wire::BackendKeyData& client_key) {
  const std::lock_guard lock(mutex_);
  keys_.erase(pack(client_key));
  local_.erase(pack(client_key));
}

std::optional<wire::BackendKeyData> CancelRegistry::find(
    const wire::BackendKeyData& client_key) const {
  const std::lock_guard lock(mutex_);
  if (auto it = keys_.find(pack(client_key)); it != keys_.end()) return it->second;
  return std::nullopt;
}

size_t CancelRegistry::size() const {
  const std::lock_guard lock(mutex_);
  return keys_.size();
}

}  // namespace kanon::proxy
