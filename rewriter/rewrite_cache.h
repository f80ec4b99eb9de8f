// RewriteCache: least-recently-used results of Rewriter::rewrite, keyed by
// everything the result depends on — the policy snapshot (version and
// identity), every field of the PlanContext, and the statement text (or its
// shape, literal_shape.h). Thread-safe (one mutex; lookups are a hash and a
// list splice).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "rewriter/rewriter.h"

namespace kanon::rewriter {

// The key of `sql` (a statement's text, or a shape's key) for a session
// planning with `context` under one policy snapshot: the context's fields,
// then `sql` itself as the key's last bytes (so another text's key under
// the same context is the prefix followed by that text).
std::string rewrite_cache_key(uint64_t policy_version, uint64_t policy_identity,
                              const PlanContext& context, std::string_view sql);

template <class Value>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // Capacity 0: nothing is kept.
  bool keeps() const { return capacity_ > 0; }

  std::optional<Value> get(const std::string& key) {
    std::lock_guard lock(mu_);
    const auto it = map_.find(key);
    if (it == map_.end()) {
      ++misses_;
      return std::nullopt;
    }
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  void put(const std::string& key, Value value) {
    if (capacity_ == 0) return;
    std::lock_guard lock(mu_);
    const auto it = map_.find(key);
    if (it != map_.end()) {
      it->second->second = std::move(value);
      lru_.splice(lru_.begin(), lru_, it->second);
      return;
    }
    lru_.emplace_front(key, std::move(value));
    map_.emplace(lru_.front().first, lru_.begin());
    while (lru_.size() > capacity_) {
      map_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  CacheStats stats() const {
    std::lock_guard lock(mu_);
    return {hits_, misses_, lru_.size()};
  }

 private:
  using Entry = std::pair<std::string, Value>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<std::string_view, typename std::list<Entry>::iterator> map_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

using RewriteCache = LruCache<RewriteResult>;

}  // namespace kanon::rewriter
