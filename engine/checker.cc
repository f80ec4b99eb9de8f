#include "engine/checker.h"

#include <algorithm>
#include <bit>
#include <limits>

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
      history_(options.history_options) {
  init_packing();
  init_base_rows();
  if (packed_) {
    keys_.assign(base_rows_.size(), 0);
    for (auto& t : tables_) t.use_packed_keys();
  } else {
    buffer_.assign(data_.data.size(), 0);
  }
}

void Checker::init_packing() {
  if (!options_.packed_keys) return;
  unsigned bits = 0;
  for (const auto& q : data_.qis) {
    int32_t max_code = 0;
    for (const auto& m : q.maps) {
      for (int32_t c : m) max_code = std::max(max_code, c);
    }
    const unsigned b = std::bit_width(static_cast<uint32_t>(max_code));
    if (bits + b > 64) {
      shifts_.clear();
      masks_.clear();
      return;
    }
    shifts_.push_back(static_cast<uint8_t>(bits));
    masks_.push_back(b == 64 ? ~0ull : (1ull << b) - 1);
    bits += b;
  }
  packed_ = true;
  for (size_t c = 0; c < width_; ++c) {
    auto& per_level = packed_maps_.emplace_back();
    for (const auto& m : data_.qis[c].maps) {
      auto& pm = per_level.emplace_back(m.size());
      for (size_t v = 0; v < m.size(); ++v) pm[v] = static_cast<uint64_t>(m[v]) << shifts_[c];
    }
  }
}

void Checker::init_base_rows() {
  if (!options_.deduplicate) {
    base_rows_.resize(data_.rows);
    for (uint32_t r = 0; r < data_.rows; ++r) base_rows_[r] = r;
    base_counts_.assign(data_.rows, 1);
    return;
  }
  // Groups rows by their level-0 codes (and sensitive value) in a scratch table.
  const size_t w = width_ + (sensitive_ ? 1 : 0);
  std::vector<int32_t> scratch;
  const int32_t* rows = data_.data.data();
  if (sensitive_) {
    scratch.resize(data_.rows * w);
    for (size_t r = 0; r < data_.rows; ++r) {
      std::copy_n(rows + r * width_, width_, scratch.data() + r * w);
      scratch[r * w + width_] = data_.sensitive[r];
    }
    rows = scratch.data();
  }
  GroupTable distinct;
  for (uint32_t r = 0; r < data_.rows; ++r) {
    distinct.add(rows, w, r, 1, hash_row(rows + static_cast<size_t>(r) * w, w));
  }
  base_rows_.reserve(distinct.size());
  base_counts_.reserve(distinct.size());
  for (const auto& c : distinct.classes()) {
    base_rows_.push_back(c.rep);
    base_counts_.push_back(c.count);
  }
}

ClassKeys Checker::class_keys() const {
  ClassKeys k;
  k.width = width_;
  if (packed_) {
    k.shifts = shifts_.data();
    k.masks = masks_.data();
  } else {
    k.buffer = buffer_.data();
  }
  return k;
}

template <int K, typename RowAt, typename OnAdd>
void Checker::run(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k,
                  GroupTable& out) {
  int32_t* buf = buffer_.data();
  const int32_t* src = data_.data.data();
  const size_t w = width_;
  for (size_t i = 0; i < n; ++i) {
    const auto [row, count, unused_key] = row_at(i);
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

template <int K, typename RowAt, typename OnAdd>
void Checker::run_packed(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k,
                         GroupTable& out, uint64_t* key_out) {
  const int32_t* src = data_.data.data();
  const size_t w = width_;
  for (size_t i = 0; i < n; ++i) {
    auto [row, count, key] = row_at(i);
    const int32_t* d = src + static_cast<size_t>(row) * w;
    if constexpr (K >= 0) {
      for (int j = 0; j < K; ++j) key = (key & cm[j].keep) | cm[j].packed_map[d[cm[j].col]];
    } else {
      for (size_t j = 0; j < k; ++j) key = (key & cm[j].keep) | cm[j].packed_map[d[cm[j].col]];
    }
    if (key_out) key_out[i] = key;
    on_add(i, row, out.add_packed(key, row, count));
  }
}

template <typename RowAt, typename OnAdd>
void Checker::dispatch(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k,
                       GroupTable& out, uint64_t* key_out) {
  cells_ += n * k;
  if (packed_) {
    switch (k) {
      case 0:
        return run_packed<0>(n, row_at, on_add, cm, k, out, key_out);
      case 1:
        return run_packed<1>(n, row_at, on_add, cm, k, out, key_out);
      case 2:
        return run_packed<2>(n, row_at, on_add, cm, k, out, key_out);
      case 3:
        return run_packed<3>(n, row_at, on_add, cm, k, out, key_out);
      case 4:
        return run_packed<4>(n, row_at, on_add, cm, k, out, key_out);
      case 5:
        return run_packed<5>(n, row_at, on_add, cm, k, out, key_out);
      case 6:
        return run_packed<6>(n, row_at, on_add, cm, k, out, key_out);
      case 7:
        return run_packed<7>(n, row_at, on_add, cm, k, out, key_out);
      case 8:
        return run_packed<8>(n, row_at, on_add, cm, k, out, key_out);
      case 9:
        return run_packed<9>(n, row_at, on_add, cm, k, out, key_out);
      default:
        return run_packed<-1>(n, row_at, on_add, cm, k, out, key_out);
    }
  }
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
  size_t source_size = base_rows_.size();
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

  // Columns to transform: with projection, those where the target differs
  // from the levels the source's keys hold (nullptr: unknown, all columns).
  // Packed keys travel with the source (full-scan keys, the previous classes,
  // the snapshot), so they are always consistent with it; the int32 buffer
  // follows the state machine described in checker.h.
  const Levels* held = nullptr;
  if (options_.projection && packed_) {
    if (source == Source::kFull) {
      held = full_valid_ ? &full_levels_ : nullptr;
    } else {
      held = source == Source::kRollup ? &current_levels_ : &snap->levels;
    }
  } else if (options_.projection && buffer_valid_ &&
             (buffer_all_rows_ || source == Source::kRollup)) {
    held = &buffer_levels_;
  }
  columns_.clear();
  for (size_t c = 0; c < width_; ++c) {
    if (!held || target[c] != (*held)[c]) {
      columns_.push_back({c, data_.qis[c].maps[target[c]].data(),
                          packed_ ? packed_maps_[c][target[c]].data() : nullptr,
                          packed_ ? ~(masks_[c] << shifts_[c]) : 0});
    }
  }

  next.clear();
  const auto no_sensitive = [](size_t, uint32_t, uint32_t) {};
  switch (source) {
    case Source::kFull: {
      const uint32_t* rows = base_rows_.data();
      const uint32_t* counts = base_counts_.data();
      const uint64_t* keys = keys_.data();
      const auto row_at = [&](size_t i) {
        return RowRef{rows[i], counts[i], packed_ ? keys[i] : 0};
      };
      if (sensitive_) {
        const int32_t* s = data_.sensitive.data();
        dispatch(
            base_rows_.size(), row_at,
            [&](size_t i, uint32_t row, uint32_t cls) {
              next.add_sensitive(cls, s[row], counts[i]);
            },
            columns_.data(), columns_.size(), next, keys_.data());
      } else {
        dispatch(base_rows_.size(), row_at, no_sensitive, columns_.data(), columns_.size(), next,
                 keys_.data());
      }
      break;
    }
    case Source::kRollup: {
      const auto& pc = prev.classes();
      const auto row_at = [&](size_t i) { return RowRef{pc[i].rep, pc[i].count, pc[i].key}; };
      if (sensitive_) {
        dispatch(
            pc.size(), row_at,
            [&](size_t i, uint32_t, uint32_t cls) {
              for (const auto& d : prev.distribution(static_cast<uint32_t>(i))) {
                next.add_sensitive(cls, d.value, d.count);
              }
            },
            columns_.data(), columns_.size(), next, nullptr);
      } else {
        dispatch(pc.size(), row_at, no_sensitive, columns_.data(), columns_.size(), next, nullptr);
      }
      break;
    }
    case Source::kSnapshot: {
      const auto row_at = [&](size_t i) {
        return RowRef{snap->reps[i], snap->counts[i], packed_ ? snap->keys[i] : 0};
      };
      if (sensitive_) {
        dispatch(
            snap->classes(), row_at,
            [&](size_t i, uint32_t, uint32_t cls) {
              for (uint32_t j = snap->dist_offsets[i]; j < snap->dist_offsets[i + 1]; ++j) {
                next.add_sensitive(cls, snap->dist[j].value, snap->dist[j].count);
              }
            },
            columns_.data(), columns_.size(), next, nullptr);
      } else {
        dispatch(snap->classes(), row_at, no_sensitive, columns_.data(), columns_.size(), next,
                 nullptr);
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
  if (source == Source::kFull) {
    full_levels_ = target;
    full_valid_ = true;
  }

  // Privacy model with suppression.
  const auto& classes = next.classes();
  suppressed_.assign(classes.size(), 0);
  suppressed_list_.clear();
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
      suppressed_list_.push_back(static_cast<uint32_t>(i));
      r.suppressed += n;
    }
  }
  r.classes = classes.size();
  r.min_class_size = r.kept_classes ? min_size : 0;
  r.anonymous = r.suppressed <= limit_;
  if (!r.anonymous && bound_only_if_not_anonymous_ && metric_.has_data_free_bound()) {
    r.quality = {std::numeric_limits<double>::infinity(), metric_.bound(target)};
  } else {
    r.quality = metric_.evaluate(target, classes, suppressed_list_, class_keys());
  }
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
    if (packed_) s.keys.reserve(classes.size());
    for (const auto& c : classes) {
      s.reps.push_back(c.rep);
      s.counts.push_back(c.count);
      if (packed_) s.keys.push_back(c.key);
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
  return metric.evaluate(last_levels_, tables_[cur_].classes(), suppressed_list_, class_keys());
}

}  // namespace kanon::engine
