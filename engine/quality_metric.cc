#include "engine/quality_metric.h"

#include <cmath>

namespace kanon::engine {

namespace {

double loss_of(uint64_t s_times_dom, uint64_t n, uint64_t dom) {
  if (dom <= 1 || n == 0) return 0;
  const double num = static_cast<double>(s_times_dom) - static_cast<double>(n);
  const double den = static_cast<double>(n) * static_cast<double>(dom) - static_cast<double>(n);
  return num / den;
}

double geometric(const std::vector<double>& losses) {
  double prod_log = 0;
  for (double l : losses) prod_log += std::log1p(l);
  return std::exp(prod_log / static_cast<double>(losses.size())) - 1;
}

}  // namespace

const base::NameTable<MetricKind>& metric_names() {
  static const base::NameTable<MetricKind> kNames{
      {MetricKind::kLoss, "loss"},
      {MetricKind::kDiscernibility, "dm"},
      {MetricKind::kDiscernibility, "dm*", true},
      {MetricKind::kDiscernibility, "dmstar", true},
      {MetricKind::kDiscernibility, "discernibility", true},
      {MetricKind::kEntropy, "entropy"},
      {MetricKind::kPrecision, "precision"},
      {MetricKind::kHeight, "height"},
      {MetricKind::kAecs, "aecs"}};
  return kNames;
}

const std::vector<MetricKind>& all_metrics() {
  static const std::vector<MetricKind> kAll{MetricKind::kLoss,    MetricKind::kDiscernibility,
                                            MetricKind::kEntropy, MetricKind::kPrecision,
                                            MetricKind::kHeight,  MetricKind::kAecs};
  return kAll;
}

QualityMetric::QualityMetric(MetricKind kind, const Dataset& data)
    : kind_(kind), width_(data.width()), rows_(data.rows) {
  for (const auto& q : data.qis) {
    max_level_.push_back(q.max_level());
    domain_.push_back(q.domain_size);
  }
  if (kind == MetricKind::kLoss) {
    for (const auto& q : data.qis) {
      auto& per_level = rows_share_.emplace_back();
      auto& gen = gen_share_.emplace_back();
      for (int l = 0; l < q.height; ++l) {
        std::vector<uint32_t> share(q.dictionary.size(), 0);
        for (uint32_t v = 0; v < q.domain_size; ++v) ++share[q.maps[l][v]];
        uint64_t sum = 0;
        for (uint32_t v = 0; v < q.domain_size; ++v) {
          sum += static_cast<uint64_t>(q.data_frequency[v]) * share[q.maps[l][v]];
        }
        per_level.push_back(std::move(share));
        gen.push_back(sum);
      }
    }
  }
  if (kind == MetricKind::kEntropy) {
    for (const auto& q : data.qis) {
      auto& per_level = log_freq_.emplace_back();
      auto& gen = gen_entropy_.emplace_back();
      for (int l = 0; l < q.height; ++l) {
        std::vector<uint64_t> freq(q.dictionary.size(), 0);
        for (uint32_t v = 0; v < q.domain_size; ++v) freq[q.maps[l][v]] += q.data_frequency[v];
        std::vector<double> lf(freq.size(), 0);
        for (size_t g = 0; g < freq.size(); ++g) {
          if (freq[g] > 0) lf[g] = std::log2(static_cast<double>(freq[g]));
        }
        double sum = 0;
        for (uint32_t v = 0; v < q.domain_size; ++v) {
          if (q.data_frequency[v] == 0) continue;
          sum += q.data_frequency[v] *
                 (lf[q.maps[l][v]] - std::log2(static_cast<double>(q.data_frequency[v])));
        }
        per_level.push_back(std::move(lf));
        gen.push_back(sum);
      }
    }
  }
}

double QualityMetric::bound(const Levels& levels) const {
  switch (kind_) {
    case MetricKind::kLoss: {
      std::vector<double> losses(width_);
      for (size_t a = 0; a < width_; ++a) {
        losses[a] = loss_of(gen_share_[a][levels[a]], rows_, domain_[a]);
      }
      return geometric(losses);
    }
    case MetricKind::kEntropy: {
      double s = 0;
      for (size_t a = 0; a < width_; ++a) s += gen_entropy_[a][levels[a]];
      return s;
    }
    case MetricKind::kPrecision: {
      double p = 0;
      for (size_t a = 0; a < width_; ++a) {
        if (max_level_[a] > 0) p += static_cast<double>(levels[a]) / max_level_[a];
      }
      return p / static_cast<double>(width_);
    }
    case MetricKind::kHeight:
      return Lattice::rank(levels);
    case MetricKind::kDiscernibility:
    case MetricKind::kAecs:
      break;
  }
  return 0;
}

QualityValue QualityMetric::evaluate(const Levels& levels, std::span<const GroupClass> classes,
                                     std::span<const uint32_t> suppressed,
                                     const ClassKeys& keys) const {
  uint64_t supp = 0;
  for (uint32_t i : suppressed) supp += classes[i].count;
  const double n = static_cast<double>(rows_);
  switch (kind_) {
    case MetricKind::kLoss: {
      std::vector<double> losses(width_);
      std::vector<uint64_t> s(width_, 0);
      // The sum over kept classes is the (precomputed) sum over all rows minus
      // the suppressed classes' share: exact in integers, and anonymous nodes
      // have few suppressed classes.
      std::vector<const uint32_t*> share(width_);
      for (size_t a = 0; a < width_; ++a) {
        share[a] = rows_share_[a][levels[a]].data();
        s[a] = gen_share_[a][levels[a]];
      }
      for (uint32_t i : suppressed) {
        const uint64_t count = classes[i].count;
        for (size_t a = 0; a < width_; ++a) s[a] -= count * share[a][keys.code(classes[i], a)];
      }
      for (size_t a = 0; a < width_; ++a) {
        losses[a] = loss_of(s[a] + supp * domain_[a], rows_, domain_[a]);
      }
      return {geometric(losses), bound(levels)};
    }
    case MetricKind::kDiscernibility: {
      double dm = 0;
      for (const auto& c : classes) dm += static_cast<double>(c.count) * c.count;
      return {dm, dm};
    }
    case MetricKind::kEntropy: {
      const double gen = bound(levels);
      double extra = 0;
      const double log_n = std::log2(n);
      for (uint32_t i : suppressed) {
        double per_row = 0;
        for (size_t a = 0; a < width_; ++a) {
          per_row += log_n - log_freq_[a][levels[a]][keys.code(classes[i], a)];
        }
        extra += per_row * classes[i].count;
      }
      return {gen + extra, gen};
    }
    case MetricKind::kPrecision: {
      const double p = bound(levels);
      const double d = static_cast<double>(width_);
      const double value =
          ((n - static_cast<double>(supp)) * p * d + static_cast<double>(supp) * d) / (n * d);
      return {value, p};
    }
    case MetricKind::kHeight: {
      const double h = Lattice::rank(levels);
      return {h, h};
    }
    case MetricKind::kAecs: {
      const size_t kept = classes.size() - suppressed.size();
      const size_t groups = kept + (supp > 0 ? 1 : 0);
      const double value = groups == 0 ? 0 : n / static_cast<double>(groups);
      const double b = classes.empty() ? 0 : n / static_cast<double>(classes.size());
      return {value, b};
    }
  }
  return {};
}

}  // namespace kanon::engine
