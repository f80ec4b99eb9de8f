#include "engine/privacy_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kanon::engine {

const base::NameTable<Diversity>& diversity_names() {
  static const base::NameTable<Diversity> kNames{{Diversity::kDistinct, "distinct"},
                                                 {Diversity::kEntropy, "entropy"},
                                                 {Diversity::kRecursive, "recursive"}};
  return kNames;
}

uint64_t PrivacyModel::suppression_limit(uint64_t rows) const {
  // A tiny epsilon keeps e.g. 0.05 x 30162 = 1508.1 from rounding below its floor.
  return static_cast<uint64_t>(std::floor(suppression * static_cast<double>(rows) + 1e-9));
}

bool PrivacyModel::monotone() const {
  switch (diversity) {
    case Diversity::kNone:
    case Diversity::kDistinct:
      return true;
    case Diversity::kEntropy:
    case Diversity::kRecursive:
      return suppression == 0;
  }
  return false;
}

bool PrivacyModel::diverse(uint32_t size, std::span<const SensitiveCount> dist) const {
  switch (diversity) {
    case Diversity::kNone:
      return true;
    case Diversity::kDistinct:
      return static_cast<double>(dist.size()) >= l;
    case Diversity::kEntropy: {
      double h = 0;
      for (const auto& d : dist) {
        const double p = static_cast<double>(d.count) / size;
        h -= p * std::log(p);
      }
      return h >= std::log(l) - 1e-12;
    }
    case Diversity::kRecursive: {
      const size_t li = static_cast<size_t>(l);
      if (dist.size() < li || li == 0) return li == 0;
      uint32_t small[64] = {};
      std::vector<uint32_t> big;
      uint32_t* counts = small;
      if (dist.size() > 64) {
        big.resize(dist.size());
        counts = big.data();
      }
      for (size_t i = 0; i < dist.size(); ++i) counts[i] = dist[i].count;
      std::sort(counts, counts + dist.size(), std::greater<>());
      double tail = 0;
      for (size_t i = li - 1; i < dist.size(); ++i) tail += counts[i];
      return counts[0] < c * tail;
    }
  }
  return false;
}

std::string PrivacyModel::describe() const {
  std::string s = fmt::format("{}-anonymity", k);
  switch (diversity) {
    case Diversity::kNone:
      break;
    case Diversity::kDistinct:
      s += fmt::format(", distinct-{}-diversity", l);
      break;
    case Diversity::kEntropy:
      s += fmt::format(", entropy-{}-diversity", l);
      break;
    case Diversity::kRecursive:
      s += fmt::format(", recursive-({},{})-diversity", c, l);
      break;
  }
  return s + fmt::format(", suppression {}", suppression);
}

}  // namespace kanon::engine
