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

wire::BackendKeyData CancelRegistry::add(const wire::BackendKeyData& backend_key) {
  const std::lock_guard lock(mutex_);
  for (;;) {
    const uint64_t r = random_u64();
    // Keep process ids positive: some drivers store them in a signed int.
    wire::BackendKeyData client_key{static_cast<uint32_t>(r >> 33) | 1u, static_cast<uint32_t>(r)};
    if (keys_.emplace(pack(client_key), backend_key).second) return client_key;
  }
}

void CancelRegistry::remove(const wire::BackendKeyData& client_key) {
  const std::lock_guard lock(mutex_);
  keys_.erase(pack(client_key));
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
