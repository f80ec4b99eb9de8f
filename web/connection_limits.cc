#include "web/connection_limits.h"

namespace kanon::web {

ConnectionLimits::Slot::~Slot() {
  if (owner_) owner_->release(address_);
}

std::optional<ConnectionLimits::Slot> ConnectionLimits::admit(const std::string& address) {
  {
    const std::lock_guard lock(mu_);
    if (held_ >= total_) return std::nullopt;
    auto& n = by_address_[address];
    if (n >= per_address_) return std::nullopt;
    ++n;
    ++held_;
  }
  return Slot(shared_from_this(), address);
}

void ConnectionLimits::release(const std::string& address) {
  const std::lock_guard lock(mu_);
  --held_;
  const auto it = by_address_.find(address);
  if (it != by_address_.end() && --it->second == 0) by_address_.erase(it);
}

size_t ConnectionLimits::size() const {
  const std::lock_guard lock(mu_);
  return held_;
}

size_t ConnectionLimits::from(const std::string& address) const {
  const std::lock_guard lock(mu_);
  const auto it = by_address_.find(address);
  return it == by_address_.end() ? 0 : it->second;
}

}  // namespace kanon::web
