// Stats: the proxy's counters, shared by every session (atomics and one
// short lock), read by SHOW STATS and the Prometheus endpoint.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rewriter/rewriter.h"

namespace kanon::proxy {

// Rewrite latency in microseconds, in fixed buckets (upper bounds).
class LatencyHistogram {
 public:
  static constexpr std::array<double, 14> kBounds = {1,   2,   5,    10,   20,   50,    100,
                                                     200, 500, 1000, 2000, 5000, 10000, 1e300};
  void add(double micros);
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const;
  // The upper bound of the bucket holding the p-quantile (0 < p <= 1); 0 when empty.
  double percentile(double p) const;
  std::array<uint64_t, kBounds.size()> buckets() const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size()> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_nanos_{0};
};

class Stats {
 public:
  std::atomic<uint64_t> connections{0};  // sessions started since start-up
  std::atomic<uint64_t> statements_passed{0};
  std::atomic<uint64_t> statements_rewritten{0};
  std::atomic<uint64_t> statements_exempt{0};  // statements of exempt sessions are not counted
  // Guarded Queries sent again because the catalog changed under them.
  std::atomic<uint64_t> guard_retries{0};
  LatencyHistogram rewrite_latency;

  void record(const rewriter::RewriteResult& result, double micros);
  // A statement or call kanon decided without the rewriter's clock (fast-path
  // calls, the outcome of a syntax probe): counted, no latency.
  void count(const rewriter::RewriteResult& result);
  uint64_t denied_total() const;
  std::map<std::string, uint64_t> denied_by_rule() const;

  // The Prometheus text exposition (version 0.0.4).
  std::string prometheus(const rewriter::CacheStats& cache, uint32_t active_clients) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> denied_;
};

}  // namespace kanon::proxy
