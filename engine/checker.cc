#include "engine/checker.h"

#include <algorithm>

namespace kanon::engine {

Checker::Checker(const Dataset& data, const PrivacyModel& privacy, const QualityMetric& metric,
                 CheckerOptions options)
    : data_(data),
      privacy_(privacy),
      metric_(metric),
      options_(options),
      width_(data.width()),
      limit_(privacy.suppression_limit(data.rows)),
      sensitive_(privacy.needs_sensitive()),
      buffer_(data.data.size()),
      history_(options.history_options) {}

template <int K, typename RowAt, typename OnAdd>
void Checker::run(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k,
                  GroupTable& out) {
  int32_t* buf = buffer_.data();
  const int32_t* src = data_.data.data();
  const size_t w = width_;
  for (size_t i = 0; i < n; ++i) {
    const auto [row, count] = row_at(i);
    int32_t* b = buf + static_cast<size_t>(row) * w;
    const int32_t* d = src + static_cast<size_t>(row) * w;
    if constexpr (K >= 0) {
      for (int j = 0; j < K; ++j) b[cm[j].col] = cm[j].map[d[cm[j].col]];
    } else {
      for (size_t j = 0; j < k; ++j) b[cm[j].col] = cm[j].map[d[cm[j].col]];
    }
    const uint32_t cls = out.add(buf, w, row, count, hash_row(b, w));
    on_add(i, row, cls);
  }
}

template <typename RowAt, typename OnAdd>
void Checker::dispatch(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k,
                       GroupTable& out) {
  cells_ += n * k;
  switch (k) {
    case 0:
      return run<0>(n, row_at, on_add, cm, k, out);
    case 1:
      return run<1>(n, row_at, on_add, cm, k, out);
    case 2:
      return run<2>(n, row_at, on_add, cm, k, out);
    case 3:
      return run<3>(n, row_at, on_add, cm, k, out);
    case 4:
      return run<4>(n, row_at, on_add, cm, k, out);
    default:
      return run<-1>(n, row_at, on_add, cm, k, out);
  }
}

CheckResult Checker::check(const Levels& target) {
  ++checks_;
  CheckResult r;
  GroupTable& prev = tables_[cur_];
  GroupTable& next = tables_[1 - cur_];

  // Source: the cheapest set of rows whose classes refine the target's.
  using Source = CheckResult::Source;
  Source source = Source::kFull;
  size_t source_size = data_.rows;
  const bool can_rollup = options_.rollup && has_current_ &&
                          std::equal(target.begin(), target.end(), current_levels_.begin(),
                                     [](uint8_t t, uint8_t c) { return t >= c; });
  if (can_rollup && prev.size() <= source_size) {
    source = Source::kRollup;
    source_size = prev.size();
  }
  const Snapshot* snap = options_.history ? history_.find(target) : nullptr;
  if (snap && snap->classes() < source_size) {
    source = Source::kSnapshot;
    source_size = snap->classes();
  }

  // Columns to transform (projection only where the rows are consistent).
  const bool consistent =
      options_.projection && buffer_valid_ && (buffer_all_rows_ || source == Source::kRollup);
  columns_.clear();
  for (size_t c = 0; c < width_; ++c) {
    if (!consistent || target[c] != buffer_levels_[c]) {
      columns_.push_back({c, data_.qis[c].maps[target[c]].data()});
    }
  }

  next.clear();
  const auto no_sensitive = [](size_t, uint32_t, uint32_t) {};
  switch (source) {
    case Source::kFull: {
      const auto row_at = [](size_t i) { return std::pair<uint32_t, uint32_t>(i, 1); };
      if (sensitive_) {
        const int32_t* s = data_.sensitive.data();
        dispatch(
            data_.rows, row_at,
            [&](size_t, uint32_t row, uint32_t cls) { next.add_sensitive(cls, s[row], 1); },
            columns_.data(), columns_.size(), next);
      } else {
        dispatch(data_.rows, row_at, no_sensitive, columns_.data(), columns_.size(), next);
      }
      break;
    }
    case Source::kRollup: {
      const auto& pc = prev.classes();
      const auto row_at = [&](size_t i) {
        return std::pair<uint32_t, uint32_t>(pc[i].rep, pc[i].count);
      };
      if (sensitive_) {
        dispatch(
            pc.size(), row_at,
            [&](size_t i, uint32_t, uint32_t cls) {
              for (const auto& d : prev.distribution(static_cast<uint32_t>(i))) {
                next.add_sensitive(cls, d.value, d.count);
              }
            },
            columns_.data(), columns_.size(), next);
      } else {
        dispatch(pc.size(), row_at, no_sensitive, columns_.data(), columns_.size(), next);
      }
      break;
    }
    case Source::kSnapshot: {
      const auto row_at = [&](size_t i) {
        return std::pair<uint32_t, uint32_t>(snap->reps[i], snap->counts[i]);
      };
      if (sensitive_) {
        dispatch(
            snap->classes(), row_at,
            [&](size_t i, uint32_t, uint32_t cls) {
              for (uint32_t j = snap->dist_offsets[i]; j < snap->dist_offsets[i + 1]; ++j) {
                next.add_sensitive(cls, snap->dist[j].value, snap->dist[j].count);
              }
            },
            columns_.data(), columns_.size(), next);
      } else {
        dispatch(snap->classes(), row_at, no_sensitive, columns_.data(), columns_.size(), next);
      }
      break;
    }
  }
  if (sensitive_) next.compact();

  // State machine update.
  cur_ = 1 - cur_;
  has_current_ = true;
  current_levels_ = target;
  buffer_levels_ = target;
  buffer_valid_ = true;
  buffer_all_rows_ = source == Source::kFull;

  // Privacy model with suppression.
  const auto& classes = next.classes();
  suppressed_.assign(classes.size(), 0);
  uint64_t min_size = UINT64_MAX;
  for (size_t i = 0; i < classes.size(); ++i) {
    const uint32_t n = classes[i].count;
    const bool pass = sensitive_
                          ? privacy_.class_passes(n, next.distribution(static_cast<uint32_t>(i)))
                          : n >= privacy_.k;
    if (pass) {
      ++r.kept_classes;
      min_size = std::min<uint64_t>(min_size, n);
    } else {
      suppressed_[i] = 1;
      r.suppressed += n;
    }
  }
  r.classes = classes.size();
  r.min_class_size = r.kept_classes ? min_size : 0;
  r.anonymous = r.suppressed <= limit_;
  r.quality = metric_.evaluate(target, classes, suppressed_, buffer_.data());
  r.source = source;
  r.rows_processed = source_size;
  last_levels_ = target;

  if (options_.history && (!r.anonymous || options_.store_anonymous_snapshots) &&
      history_.worth_storing(classes.size(), data_.rows,
                             source == Source::kFull ? 0 : source_size)) {
    Snapshot s;
    s.levels = target;
    s.reps.reserve(classes.size());
    s.counts.reserve(classes.size());
    for (const auto& c : classes) {
      s.reps.push_back(c.rep);
      s.counts.push_back(c.count);
    }
    if (sensitive_) {
      s.dist_offsets.push_back(0);
      for (size_t i = 0; i < classes.size(); ++i) {
        for (const auto& d : next.distribution(static_cast<uint32_t>(i))) s.dist.push_back(d);
        s.dist_offsets.push_back(static_cast<uint32_t>(s.dist.size()));
      }
    }
    history_.store(std::move(s));
  }
  return r;
}

QualityValue Checker::evaluate_last(const QualityMetric& metric) const {
  return metric.evaluate(last_levels_, tables_[cur_].classes(), suppressed_, buffer_.data());
}

}  // namespace kanon::engine
