#include "rewriter/rewrite_cache.h"

namespace kanon::rewriter {

std::string RewriteCache::make_key(uint64_t policy_version, uint64_t policy_identity,
                                   std::string_view search_path, bool exempt,
                                   std::string_view sql) {
  std::string key;
  key.reserve(sql.size() + search_path.size() + 48);
  key += std::to_string(policy_version);
  key += ':';
  key += std::to_string(policy_identity);
  key += exempt ? ":e:" : ":r:";
  key += std::to_string(search_path.size());
  key += ':';
  key += search_path;
  key += sql;
  return key;
}

std::optional<RewriteResult> RewriteCache::get(const std::string& key) {
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

void RewriteCache::put(const std::string& key, const RewriteResult& result) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mu_);
  const auto it = map_.find(key);
  if (it != map_.end()) {
    it->second->second = result;
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(key, result);
  map_.emplace(lru_.front().first, lru_.begin());
  while (lru_.size() > capacity_) {
    map_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

CacheStats RewriteCache::stats() const {
  std::lock_guard lock(mu_);
  return {hits_, misses_, lru_.size()};
}

}  // namespace kanon::rewriter
