#include "engine/mondrian.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/stopwatch.h"

namespace kanon::engine {

const base::NameTable<MondrianChoice>& mondrian_choices() {
  static const base::NameTable<MondrianChoice> kNames{
      {MondrianChoice::kSpan, "span"},
      {MondrianChoice::kMaxEntropy, "max-entropy"},
      {MondrianChoice::kMaxEntropy, "max_entropy", true},
      {MondrianChoice::kMinEntropy, "min-entropy"},
      {MondrianChoice::kMinEntropy, "min_entropy", true}};
  return kNames;
}

int common_level(const MondrianAttribute& a, int32_t min, int32_t max) {
  for (size_t level = 0; level < a.node.size(); ++level) {
    if (a.node[level][min] == a.node[level][max]) return static_cast<int>(level);
  }
  return static_cast<int>(a.node.size()) - 1;
}

double attribute_ncp(const MondrianAttribute& a, const AttributeRange& r) {
  if (r.min == r.max) return 0;
  switch (a.kind) {
    case MondrianKind::kNumeric:
      return a.high > a.low ? (a.numbers[r.max] - a.numbers[r.min]) / (a.high - a.low) : 0;
    case MondrianKind::kHierarchy: {
      const int level = common_level(a, r.min, r.max);
      return static_cast<double>(a.node_leaves[level][a.node[level][r.min]]) / a.domain;
    }
    case MondrianKind::kSet:
      return r.distinct <= 1 ? 0 : static_cast<double>(r.distinct) / a.domain;
  }
  return 0;
}

MondrianLoss mondrian_loss(const MondrianInput& in, const MondrianResult& r) {
  MondrianLoss loss;
  const size_t d = in.qis.size();
  loss.rows = in.rows;
  loss.classes = r.classes();
  loss.min_class_size = r.min_class_size;
  for (size_t c = 0; c < r.classes(); ++c) {
    const double size = r.class_end[c] - r.class_begin(c);
    loss.dp += size * size;
    double ncp = 0;
    for (size_t a = 0; a < d; ++a) ncp += attribute_ncp(in.qis[a], r.ranges[c * d + a]);
    loss.ncp_sum += size * ncp;
  }
  loss.gcp = in.rows && d ? loss.ncp_sum / (static_cast<double>(d) * in.rows) : 0;
  return loss;
}

namespace {

// Epoch-stamped counters over one domain: reset is O(1) per partition.
struct StampedCounts {
  std::vector<uint32_t> stamp;
  std::vector<uint32_t> count;
  void resize(uint32_t domain) {
    stamp.assign(domain, 0);
    count.assign(domain, 0);
  }
};

// Which side(s) of a cut each value of one column (sensitive value or
// person) occurs on: epoch-stamped, so a partition's pass touches only its
// own values.
struct SideMasks {
  std::vector<uint32_t> stamp;
  std::vector<uint8_t> mask;
  std::vector<int32_t> touched;
  void resize(uint32_t domain) {
    stamp.assign(domain, 0);
    mask.assign(domain, 0);
    touched.reserve(domain);
  }
  // Values present on the sides in `bits`.
  uint32_t distinct_with(int bits) const {
    uint32_t n = 0;
    for (int32_t v : touched) n += (mask[v] & bits) != 0;
    return n;
  }
};

class Partitioner {
 public:
  Partitioner(const MondrianInput& in, const MondrianOptions& o) : in_(in), o_(o) {
    const size_t d = in.qis.size();
    counts_.resize(d);
    uint32_t widest = 1;
    for (size_t a = 0; a < d; ++a) {
      counts_[a].resize(in.qis[a].domain);
      widest = std::max(widest, in.qis[a].domain);
    }
    histogram_.assign(widest + 1, 0);
    sensitive_.resize(in.sensitive_domain);
    persons_.resize(in.person_domain);
    touched_codes_.reserve(widest);
    stats_.resize(d);
    score_.resize(d);
    rank_.resize(d);
    use_l_ = o.l > 1 && !in.sensitive.empty();
    use_persons_ = in.counts_persons();
  }

  MondrianResult run() {
    const base::Stopwatch clock;
    MondrianResult r;
    const auto n = static_cast<uint32_t>(in_.rows);
    r.order.resize(n);
    for (uint32_t i = 0; i < n; ++i) r.order[i] = i;
    order_ = r.order.data();
    if (n < o_.k) {
      throw MondrianError(fmt::format("the table has {} rows, fewer than k = {}", n, o_.k));
    }
    if (use_persons_) {
      const uint32_t persons = distinct(persons_, in_.person.data(), 0, n);
      if (persons < o_.k) {
        throw MondrianError(
            fmt::format("the table has {} distinct persons in '{}', fewer than k = {}", persons,
                        in_.person_name, o_.k));
      }
    }
    if (use_l_) {
      const uint32_t values = distinct(sensitive_, in_.sensitive.data(), 0, n);
      if (values < o_.l) {
        throw MondrianError(fmt::format(
            "the table has {} distinct sensitive values, fewer than l = {}", values, o_.l));
      }
    }
    r.min_class_size = n;
    uint64_t rows_done = 0, next_report = std::max<uint64_t>(1, n / 100);
    std::vector<std::pair<uint32_t, uint32_t>> stack{{0, n}};
    while (!stack.empty()) {
      const auto [b, e] = stack.back();
      stack.pop_back();
      compute_stats(b, e);
      uint32_t mid = 0;
      if (e - b >= 2 * o_.k && cut(b, e, &mid)) {
        stack.push_back({mid, e});
        stack.push_back({b, mid});
        continue;
      }
      r.class_end.push_back(e);
      for (const auto& s : stats_) r.ranges.push_back({s.min, s.max, s.distinct});
      const uint32_t size = use_persons_ ? distinct(persons_, in_.person.data(), b, e) : e - b;
      r.min_class_size = std::min(r.min_class_size, size);
      rows_done += e - b;
      if (o_.progress && (rows_done >= next_report || rows_done == n)) {
        next_report = rows_done + std::max<uint64_t>(1, n / 100);
        o_.progress({rows_done, n, r.class_end.size(), clock.ms()});
      }
    }
    r.ms = clock.ms();
    r.cpu_ms = clock.cpu_ms();
    return r;
  }

 private:
  uint32_t next_epoch() {
    if (++epoch_ == 0) {  // wrapped: clear every stamp once
      for (auto& c : counts_) std::fill(c.stamp.begin(), c.stamp.end(), 0);
      std::fill(sensitive_.stamp.begin(), sensitive_.stamp.end(), 0);
      std::fill(persons_.stamp.begin(), persons_.stamp.end(), 0);
      epoch_ = 1;
    }
    return epoch_;
  }

  // Distinct values of `values` over order_[b, e).
  uint32_t distinct(SideMasks& m, const int32_t* values, uint32_t b, uint32_t e) {
    const uint32_t ep = next_epoch();
    uint32_t n = 0;
    for (uint32_t i = b; i < e; ++i) {
      const int32_t v = values[order_[i]];
      if (m.stamp[v] != ep) {
        m.stamp[v] = ep;
        ++n;
      }
    }
    return n;
  }

  // Min, max, and (for sets and the entropy choices) distinct count and
  // entropy of every attribute over order_[b, e).
  void compute_stats(uint32_t b, uint32_t e) {
    const bool entropy = o_.choice != MondrianChoice::kSpan;
    const double n = e - b;
    for (size_t a = 0; a < in_.qis.size(); ++a) {
      const MondrianAttribute& attr = in_.qis[a];
      const int32_t* col = attr.codes.data();
      Stats& s = stats_[a];
      int32_t lo = col[order_[b]], hi = lo;
      for (uint32_t i = b + 1; i < e; ++i) {
        const int32_t v = col[order_[i]];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      s.min = lo;
      s.max = hi;
      s.distinct = lo == hi ? 1 : 0;
      s.entropy = 0;
      if (lo != hi && (entropy || attr.kind == MondrianKind::kSet)) {
        const uint32_t ep = next_epoch();
        StampedCounts& c = counts_[a];
        touched_codes_.clear();
        for (uint32_t i = b; i < e; ++i) {
          const int32_t v = col[order_[i]];
          if (c.stamp[v] != ep) {
            c.stamp[v] = ep;
            c.count[v] = 0;
            touched_codes_.push_back(v);
          }
          ++c.count[v];
        }
        s.distinct = static_cast<uint32_t>(touched_codes_.size());
        if (entropy) {
          double sum = 0;
          for (int32_t v : touched_codes_) sum += c.count[v] * std::log(c.count[v]);
          s.entropy = std::log(n) - sum / n;
        }
      }
      if (o_.choice == MondrianChoice::kSpan) {
        if (attr.kind == MondrianKind::kNumeric) {
          score_[a] = attr.high > attr.low
                          ? (attr.numbers[hi] - attr.numbers[lo]) / (attr.high - attr.low)
                          : 0;
        } else {
          score_[a] = attr.domain > 1 ? static_cast<double>(hi - lo) / (attr.domain - 1) : 0;
        }
      } else {
        score_[a] = o_.choice == MondrianChoice::kMaxEntropy ? s.entropy : -s.entropy;
      }
    }
  }

  // Tries the attributes in order of their score; on the first allowable
  // cut, partitions order_[b, e) in place and sets *mid.
  bool cut(uint32_t b, uint32_t e, uint32_t* mid) {
    const size_t d = in_.qis.size();
    for (size_t a = 0; a < d; ++a) rank_[a] = a;
    // Stable: ties keep the attribute order.
    std::stable_sort(rank_.begin(), rank_.end(),
                     [&](size_t x, size_t y) { return score_[x] > score_[y]; });
    for (size_t a : rank_) {
      if (stats_[a].min == stats_[a].max) continue;
      if (try_cut(a, b, e, mid)) return true;
    }
    return false;
  }

  bool try_cut(size_t a, uint32_t b, uint32_t e, uint32_t* mid) {
    const int32_t* col = in_.qis[a].codes.data();
    const uint32_t n = e - b;
    const int32_t lo = stats_[a].min, hi = stats_[a].max;
    const uint32_t target = (n + 1) / 2;  // the lower median is the target-th smallest
    int32_t median;
    uint32_t less = 0, less_equal = 0;
    if (static_cast<uint32_t>(hi - lo) < n) {
      std::fill(histogram_.begin(), histogram_.begin() + (hi - lo + 1), 0);
      for (uint32_t i = b; i < e; ++i) ++histogram_[col[order_[i]] - lo];
      uint32_t cumulative = 0;
      median = lo;
      for (int32_t v = lo; v <= hi; ++v) {
        const uint32_t next = cumulative + histogram_[v - lo];
        if (next >= target) {
          median = v;
          less = cumulative;
          less_equal = next;
          break;
        }
        cumulative = next;
      }
    } else {
      uint32_t* m = order_ + b + (target - 1);
      std::nth_element(order_ + b, m, order_ + e,
                       [col](uint32_t x, uint32_t y) { return col[x] < col[y]; });
      median = col[*m];
      for (uint32_t i = b; i < e; ++i) {
        const int32_t v = col[order_[i]];
        less += v < median;
        less_equal += v <= median;
      }
    }
    // Candidate boundaries: left = codes <= median, or codes < median.
    struct Candidate {
      int32_t split;  // left = codes < split
      uint32_t left;
      int sides[2];  // side masks counted on the left and the right
    };
    Candidate cands[2] = {{median + 1, less_equal, {3, 4}}, {median, less, {1, 6}}};
    const auto off_centre = [n](uint32_t left) {
      return std::abs(2 * static_cast<int64_t>(left) - static_cast<int64_t>(n));
    };
    if (off_centre(cands[1].left) < off_centre(cands[0].left)) std::swap(cands[0], cands[1]);
    bool masks_ready = false;
    for (const Candidate& c : cands) {
      if (c.left < o_.k || n - c.left < o_.k) continue;
      if (!masks_ready && (use_l_ || use_persons_)) {
        if (use_l_) side_masks(sensitive_, in_.sensitive.data(), col, median, b, e);
        if (use_persons_) side_masks(persons_, in_.person.data(), col, median, b, e);
        masks_ready = true;
      }
      if (use_persons_ &&
          (persons_.distinct_with(c.sides[0]) < o_.k || persons_.distinct_with(c.sides[1]) < o_.k))
        continue;
      if (use_l_ && (sensitive_.distinct_with(c.sides[0]) < o_.l ||
                     sensitive_.distinct_with(c.sides[1]) < o_.l))
        continue;
      const int32_t split = c.split;
      std::partition(order_ + b, order_ + e, [col, split](uint32_t r) { return col[r] < split; });
      *mid = b + c.left;
      return true;
    }
    return false;
  }

  // Marks each value of `values` over order_[b, e) with bit 1 (code < median),
  // 2 (== median) or 4 (> median).
  void side_masks(SideMasks& m, const int32_t* values, const int32_t* col, int32_t median,
                  uint32_t b, uint32_t e) {
    const uint32_t ep = next_epoch();
    m.touched.clear();
    for (uint32_t i = b; i < e; ++i) {
      const uint32_t r = order_[i];
      const int32_t v = values[r];
      if (m.stamp[v] != ep) {
        m.stamp[v] = ep;
        m.mask[v] = 0;
        m.touched.push_back(v);
      }
      const int32_t c = col[r];
      m.mask[v] |= c < median ? 1 : (c == median ? 2 : 4);
    }
  }

  struct Stats {
    int32_t min = 0, max = 0;
    uint32_t distinct = 0;  // 1 when min == max; counted for sets and entropy choices
    double entropy = 0;
  };

  const MondrianInput& in_;
  const MondrianOptions& o_;
  bool use_l_ = false;
  bool use_persons_ = false;
  uint32_t* order_ = nullptr;
  uint32_t epoch_ = 0;
  std::vector<StampedCounts> counts_;
  std::vector<uint32_t> histogram_;
  SideMasks sensitive_;  // distinct sensitive values per side of a cut (l-diversity)
  SideMasks persons_;    // distinct persons per side of a cut (person mode)
  std::vector<int32_t> touched_codes_;
  std::vector<Stats> stats_;
  std::vector<double> score_;
  std::vector<size_t> rank_;
};

}  // namespace

MondrianResult mondrian(const MondrianInput& in, const MondrianOptions& options) {
  if (options.k < 1) throw MondrianError("k must be at least 1");
  if (in.qis.empty()) throw MondrianError("at least one quasi-identifier is required");
  if (options.l > 1 && in.sensitive.empty()) {
    throw MondrianError("l-diversity needs a sensitive attribute");
  }
  return Partitioner(in, options).run();
}

}  // namespace kanon::engine
