#include "proxy/audit_ring.h"

#include <cassert>

namespace kanon::proxy {

AuditRing::AuditRing(size_t capacity) : capacity_(capacity) {
  assert(capacity > 0);
  slots_.reserve(capacity);
}

void AuditRing::push(const AuditRecord& record) {
  const std::lock_guard lock(mu_);
  if (slots_.size() < capacity_) {
    slots_.push_back(record);
    return;
  }
  slots_[next_] = record;
  next_ = (next_ + 1) % capacity_;
}

std::vector<AuditRecord> AuditRing::latest() const {
  const std::lock_guard lock(mu_);
  std::vector<AuditRecord> out;
  out.reserve(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) out.push_back(slots_[(next_ + i) % slots_.size()]);
  return out;
}

}  // namespace kanon::proxy
