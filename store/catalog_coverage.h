// CatalogCoverage: how many catalog notifications (CatalogWatcher, one per
// DDL event) the served catalog facts cover. A read that began after N
// notifications were received covers them once it is published; a failed
// read covers nothing new. A session that finds the coverage behind the
// notifications received reads the catalog first, unless a read that
// covers them was published meanwhile (many sessions catching up at once
// read the catalog once: PolicyStore::refresh_catalog_covering).
//
// Thread-safety: every member may be called from any thread (an atomic; the
// coverage only grows).
#pragma once

#include <atomic>
#include <cstdint>

namespace kanon::store {

class CatalogCoverage {
 public:
  // Notifications the published facts cover.
  uint64_t covered() const { return covered_.load(); }
  // Whether they cover the first `notifications`: no read is needed for them.
  bool covers(uint64_t notifications) const { return covered() >= notifications; }
  // A read that began after `notifications` were received was published;
  // `ok` when it read the facts.
  void published(uint64_t notifications, bool ok) {
    if (!ok) return;
    uint64_t was = covered_.load();
    while (was < notifications && !covered_.compare_exchange_weak(was, notifications)) {
    }
  }

 private:
  std::atomic<uint64_t> covered_{0};
};

}  // namespace kanon::store
