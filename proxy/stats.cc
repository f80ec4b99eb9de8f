#include "proxy/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kanon::proxy {

void LatencyHistogram::add(double micros) {
  const auto it = std::lower_bound(kBounds.begin(), kBounds.end(), micros);
  buckets_[std::min<size_t>(it - kBounds.begin(), kBounds.size() - 1)].fetch_add(
      1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(micros * 1000), std::memory_order_relaxed);
}

double LatencyHistogram::sum() const {
  return static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1000.0;
}

std::array<uint64_t, LatencyHistogram::kBounds.size()> LatencyHistogram::buckets() const {
  std::array<uint64_t, kBounds.size()> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = buckets_[i].load(std::memory_order_relaxed);
  return out;
}

double LatencyHistogram::percentile(double p) const {
  const auto b = buckets();
  uint64_t total = 0;
  for (auto n : b) total += n;
  if (total == 0) return 0;
  const auto rank = static_cast<uint64_t>(std::ceil(p * static_cast<double>(total)));
  uint64_t seen = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    seen += b[i];
    if (seen >= std::max<uint64_t>(rank, 1)) return kBounds[i];
  }
  return kBounds.back();
}

void Stats::record(const rewriter::RewriteResult& result, double micros) {
  rewrite_latency.add(micros);
  count(result);
}

void Stats::count(const rewriter::RewriteResult& result) {
  switch (result.verdict) {
    case rewriter::Verdict::kPass:
      statements_passed.fetch_add(1, std::memory_order_relaxed);
      break;
    case rewriter::Verdict::kRewritten:  // only guarded (catalog_guard.h): passed
      (result.masked ? statements_rewritten : statements_passed)
          .fetch_add(1, std::memory_order_relaxed);
      break;
    case rewriter::Verdict::kDenied: {
      const std::lock_guard lock(mu_);
      ++denied_[result.rule.empty() ? "unknown" : result.rule];
      break;
    }
    case rewriter::Verdict::kLookup:  // Session::rewrite turns these into denials
      break;
  }
}

uint64_t Stats::denied_total() const {
  const std::lock_guard lock(mu_);
  uint64_t n = 0;
  for (const auto& [rule, count] : denied_) n += count;
  return n;
}

std::map<std::string, uint64_t> Stats::denied_by_rule() const {
  const std::lock_guard lock(mu_);
  return denied_;
}

std::string Stats::prometheus(const rewriter::CacheStats& cache, uint32_t active_clients) const {
  std::string out;
  const auto counter = [&](const char* name, const char* help, uint64_t value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, value);
  };
  out += fmt::format(
      "# HELP kanon_clients_active Client connections open now.\n"
      "# TYPE kanon_clients_active gauge\nkanon_clients_active {}\n",
      active_clients);
  counter("kanon_connections_total", "Client sessions started.", connections.load());
  counter("kanon_statements_passed_total",
          "Statements of restricted sessions passed unchanged (no protected table).",
          statements_passed.load());
  counter("kanon_statements_rewritten_total",
          "Statements of restricted sessions rewritten with masks.", statements_rewritten.load());
  counter("kanon_guard_retries_total",
          "Statements sent again because the catalog changed between decision and execution.",
          guard_retries.load());
  out +=
      "# HELP kanon_statements_denied_total Statements of restricted sessions denied, by rule.\n"
      "# TYPE kanon_statements_denied_total counter\n";
  for (const auto& [rule, n] : denied_by_rule())
    out += fmt::format("kanon_statements_denied_total{{rule=\"{}\"}} {}\n", rule, n);
  counter("kanon_rewrite_cache_hits_total", "Rewrite cache hits.", cache.hits);
  counter("kanon_rewrite_cache_misses_total", "Rewrite cache misses.", cache.misses);
  counter("kanon_rewrite_cache_shape_hits_total",
          "Rewrite cache hits by the statement's shape (a text new to the cache).",
          cache.shape_hits);
  out +=
      "# HELP kanon_rewrite_seconds Time spent rewriting one statement.\n"
      "# TYPE kanon_rewrite_seconds histogram\n";
  const auto b = rewrite_latency.buckets();
  uint64_t cumulative = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    cumulative += b[i];
    const std::string le =
        i + 1 == b.size() ? "+Inf" : fmt::format("{:g}", LatencyHistogram::kBounds[i] / 1e6);
    out += fmt::format("kanon_rewrite_seconds_bucket{{le=\"{}\"}} {}\n", le, cumulative);
  }
  out += fmt::format("kanon_rewrite_seconds_sum {:g}\nkanon_rewrite_seconds_count {}\n",
                     rewrite_latency.sum() / 1e6, cumulative);
  return out;
}

}  // namespace kanon::proxy
