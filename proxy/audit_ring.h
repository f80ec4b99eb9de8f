// AuditRing: the latest audit records in memory, for the console's SHOW
// AUDIT. Fixed capacity; the oldest record makes room. Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "proxy/audit_record.h"

namespace kanon::proxy {

class AuditRing {
 public:
  // REQUIRES: capacity > 0.
  explicit AuditRing(size_t capacity);

  void push(const AuditRecord& record);
  // The records held, oldest first (at most capacity()).
  std::vector<AuditRecord> latest() const;
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::vector<AuditRecord> slots_;
  size_t next_ = 0;  // where the next record goes once slots_ is full
};

}  // namespace kanon::proxy
