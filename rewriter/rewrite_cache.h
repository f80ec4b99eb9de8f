// RewriteCache: least-recently-used results of Rewriter::rewrite, keyed by
// everything the result depends on — the policy snapshot (version and
// identity), every field of the PlanContext, and the statement text. Thread-safe (one mutex;
// lookups are a hash and a list splice).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rewriter/rewriter.h"

namespace kanon::rewriter {

class RewriteCache {
 public:
  explicit RewriteCache(size_t capacity) : capacity_(capacity) {}

  static std::string make_key(uint64_t policy_version, uint64_t policy_identity,
                              const PlanContext& context, std::string_view sql);

  std::optional<RewriteResult> get(const std::string& key);
  void put(const std::string& key, const RewriteResult& result);
  CacheStats stats() const;

 private:
  using Entry = std::pair<std::string, RewriteResult>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<std::string_view, std::list<Entry>::iterator> map_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace kanon::rewriter
