#include "engine/checker.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <type_traits>
#include <utility>

namespace kanon::engine {

using Source = CheckResult::Source;

Checker::Checker(const Dataset& data, const PrivacyModel& privacy, const QualityMetric& metric,
                 CheckerOptions options)
    : data_(data),
      privacy_(privacy),
      metric_(metric),
      options_(options),
      width_(data.width()),
      limit_(privacy.suppression_limit(data.rows)),
      sensitive_(privacy.needs_sensitive()),
      person_(data.counts_persons()),
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
  // Groups rows by their level-0 codes (and sensitive value, and person) in a
  // scratch table.
  const size_t w = width_ + (sensitive_ ? 1 : 0) + (person_ ? 1 : 0);
  std::vector<int32_t> scratch;
  const int32_t* rows = data_.data.data();
  if (w != width_) {
    scratch.resize(data_.rows * w);
    for (size_t r = 0; r < data_.rows; ++r) {
      int32_t* out = std::copy_n(rows + r * width_, width_, scratch.data() + r * w);
      if (sensitive_) *out++ = data_.sensitive[r];
      if (person_) *out = data_.person[r];
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

namespace {

// Calls f(std::integral_constant<int, K>{}) with K = k when k is one of Ks,
// else with K = -1. The transformation loops take the number of columns as K,
// so for small k the compiler unrolls them; K = -1 is the loop with a
// run-time count. The fold tries K = 0, 1, ... in turn and stops at a match.
template <typename F, int... Ks>
void with_column_count(size_t k, F&& f, std::integer_sequence<int, Ks...>) {
  const bool unrolled =
      ((k == static_cast<size_t>(Ks) && (f(std::integral_constant<int, Ks>{}), true)) || ...);
  if (!unrolled) f(std::integral_constant<int, -1>{});
}

// with_column_count for K in 0 .. N-1.
template <int N, typename F>
void with_column_count(size_t k, F&& f) {
  with_column_count(k, std::forward<F>(f), std::make_integer_sequence<int, N>{});
}

// Column counts below these get an unrolled loop: packed keys are cheap per
// column, so more of them pay off than for int32 cells.
constexpr int kUnrolledPacked = 10;
constexpr int kUnrolledCells = 5;

}  // namespace

template <typename RowAt, typename OnAdd>
void Checker::dispatch(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k,
                       GroupTable& out, uint64_t* key_out) {
  cells_ += n * k;
  if (packed_) {
    with_column_count<kUnrolledPacked>(k, [&](auto count) {
      run_packed<decltype(count)::value>(n, row_at, on_add, cm, k, out, key_out);
    });
  } else {
    with_column_count<kUnrolledCells>(
        k, [&](auto count) { run<decltype(count)::value>(n, row_at, on_add, cm, k, out); });
  }
}

CheckResult Checker::check(const Levels& target) {
  ++checks_;
  const RowSource source = choose_source(target);
  choose_columns(target, levels_held_by(source));
  const GroupTable& prev = tables_[cur_];
  GroupTable& next = tables_[1 - cur_];
  next.clear();
  switch (source.kind) {
    case Source::kFull:
      group_full_scan(next);
      break;
    case Source::kRollup:
      group_previous_classes(prev, next);
      break;
    case Source::kStored:
      group_stored(*source.stored, next);
      break;
  }
  if (sensitive_) next.compact();
  if (person_) next.compact_persons();
  advance_state(target, source.kind);

  CheckResult r = apply_privacy_model(next);
  if (!r.anonymous && bound_only_if_not_anonymous_ && metric_.has_data_free_bound()) {
    r.quality = {std::numeric_limits<double>::infinity(), metric_.bound(target)};
  } else {
    r.quality = metric_.evaluate(target, next.classes(), suppressed_list_, class_keys());
  }
  r.source = source.kind;
  r.rows_processed = source.rows;
  last_levels_ = target;
  if (options_.history && (!r.anonymous || options_.store_anonymous_classes) &&
      history_.worth_storing(next.size(), data_.rows,
                             source.kind == Source::kFull ? 0 : source.rows))
    store_classes(target, next);
  return r;
}

// The cheapest set of rows whose classes refine the target's: every distinct
// input row, the previous check's classes (roll-up: the target generalizes
// them) or the stored classes of an earlier check that the target generalizes.
Checker::RowSource Checker::choose_source(const Levels& target) {
  RowSource source{Source::kFull, base_rows_.size(), nullptr};
  const bool can_rollup = options_.rollup && has_current_ &&
                          std::equal(target.begin(), target.end(), current_levels_.begin(),
                                     [](uint8_t t, uint8_t c) { return t >= c; });
  if (can_rollup && tables_[cur_].size() <= source.rows)
    source = {Source::kRollup, tables_[cur_].size(), nullptr};
  const StoredClasses* snap = options_.history ? history_.find(target) : nullptr;
  if (snap && snap->classes() < source.rows) source = {Source::kStored, snap->classes(), snap};
  return source;
}

// With projection, the levels the source's keys already hold (only the other
// columns need transforming); nullptr when unknown (transform all columns).
// Packed keys travel with the source (full-scan keys, the previous classes,
// the stored classes), so they are always consistent with it; the int32 buffer
// follows the state machine described in checker.h.
const Levels* Checker::levels_held_by(const RowSource& source) const {
  if (!options_.projection) return nullptr;
  if (packed_) {
    switch (source.kind) {
      case Source::kFull:
        return full_valid_ ? &full_levels_ : nullptr;
      case Source::kRollup:
        return &current_levels_;
      case Source::kStored:
        return &source.stored->levels;
    }
  }
  if (buffer_valid_ && (buffer_all_rows_ || source.kind == Source::kRollup)) return &buffer_levels_;
  return nullptr;
}

void Checker::choose_columns(const Levels& target, const Levels* held) {
  columns_.clear();
  for (size_t c = 0; c < width_; ++c) {
    if (!held || target[c] != (*held)[c]) {
      columns_.push_back({c, data_.qis[c].maps[target[c]].data(),
                          packed_ ? packed_maps_[c][target[c]].data() : nullptr,
                          packed_ ? ~(masks_[c] << shifts_[c]) : 0});
    }
  }
}

// Every distinct input row with its multiplicity; packed keys are kept for
// the next full scan.
void Checker::group_full_scan(GroupTable& next) {
  const uint32_t* rows = base_rows_.data();
  const uint32_t* counts = base_counts_.data();
  const uint64_t* keys = keys_.data();
  const auto row_at = [&](size_t i) { return RowRef{rows[i], counts[i], packed_ ? keys[i] : 0}; };
  if (person_) {
    const int32_t* s = data_.sensitive.data();
    const int32_t* p = data_.person.data();
    dispatch(
        base_rows_.size(), row_at,
        [&](size_t i, uint32_t row, uint32_t cls) {
          if (sensitive_) next.add_sensitive(cls, s[row], counts[i]);
          next.add_person(cls, p[row]);
        },
        columns_.data(), columns_.size(), next, keys_.data());
  } else if (sensitive_) {
    const int32_t* s = data_.sensitive.data();
    dispatch(
        base_rows_.size(), row_at,
        [&](size_t i, uint32_t row, uint32_t cls) { next.add_sensitive(cls, s[row], counts[i]); },
        columns_.data(), columns_.size(), next, keys_.data());
  } else {
    dispatch(base_rows_.size(), row_at, kNoSensitive, columns_.data(), columns_.size(), next,
             keys_.data());
  }
}

// Roll-up: the previous check's classes, each through its representative.
void Checker::group_previous_classes(const GroupTable& prev, GroupTable& next) {
  const auto& pc = prev.classes();
  const auto row_at = [&](size_t i) { return RowRef{pc[i].rep, pc[i].count, pc[i].key}; };
  if (person_) {
    dispatch(
        pc.size(), row_at,
        [&](size_t i, uint32_t, uint32_t cls) {
          const auto c = static_cast<uint32_t>(i);
          if (sensitive_) {
            for (const auto& d : prev.distribution(c)) next.add_sensitive(cls, d.value, d.count);
          }
          for (const int32_t p : prev.persons(c)) next.add_person(cls, p);
        },
        columns_.data(), columns_.size(), next, nullptr);
  } else if (sensitive_) {
    dispatch(
        pc.size(), row_at,
        [&](size_t i, uint32_t, uint32_t cls) {
          for (const auto& d : prev.distribution(static_cast<uint32_t>(i)))
            next.add_sensitive(cls, d.value, d.count);
        },
        columns_.data(), columns_.size(), next, nullptr);
  } else {
    dispatch(pc.size(), row_at, kNoSensitive, columns_.data(), columns_.size(), next, nullptr);
  }
}

void Checker::group_stored(const StoredClasses& snap, GroupTable& next) {
  const auto row_at = [&](size_t i) {
    return RowRef{snap.reps[i], snap.counts[i], packed_ ? snap.keys[i] : 0};
  };
  if (person_) {
    dispatch(
        snap.classes(), row_at,
        [&](size_t i, uint32_t, uint32_t cls) {
          if (sensitive_) {
            for (uint32_t j = snap.dist_offsets[i]; j < snap.dist_offsets[i + 1]; ++j)
              next.add_sensitive(cls, snap.dist[j].value, snap.dist[j].count);
          }
          for (uint32_t j = snap.person_offsets[i]; j < snap.person_offsets[i + 1]; ++j)
            next.add_person(cls, snap.persons[j]);
        },
        columns_.data(), columns_.size(), next, nullptr);
  } else if (sensitive_) {
    dispatch(
        snap.classes(), row_at,
        [&](size_t i, uint32_t, uint32_t cls) {
          for (uint32_t j = snap.dist_offsets[i]; j < snap.dist_offsets[i + 1]; ++j)
            next.add_sensitive(cls, snap.dist[j].value, snap.dist[j].count);
        },
        columns_.data(), columns_.size(), next, nullptr);
  } else {
    dispatch(snap.classes(), row_at, kNoSensitive, columns_.data(), columns_.size(), next, nullptr);
  }
}

// The buffer state machine (checker.h): the new classes are current, the
// buffer holds the target's codes for all rows only after a full scan.
void Checker::advance_state(const Levels& target, Source source) {
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
}

// Marks the classes that fail the privacy model as suppressed and counts what
// is kept; anonymous when the suppressed rows stay within the limit.
CheckResult Checker::apply_privacy_model(const GroupTable& table) {
  CheckResult r;
  const auto& classes = table.classes();
  suppressed_.assign(classes.size(), 0);
  suppressed_list_.clear();
  uint64_t min_size = UINT64_MAX;
  for (size_t i = 0; i < classes.size(); ++i) {
    const uint32_t n = classes[i].count;
    const auto c = static_cast<uint32_t>(i);
    bool pass;
    uint64_t size = n;  // what k is tested on
    if (person_) {
      size = table.persons(c).size();
      pass = size >= privacy_.k && (!sensitive_ || privacy_.diverse(n, table.distribution(c)));
    } else {
      pass = sensitive_ ? privacy_.class_passes(n, table.distribution(c)) : n >= privacy_.k;
    }
    if (pass) {
      ++r.kept_classes;
      min_size = std::min(min_size, size);
    } else {
      suppressed_[i] = 1;
      suppressed_list_.push_back(static_cast<uint32_t>(i));
      r.suppressed += n;
    }
  }
  r.classes = classes.size();
  r.min_class_size = r.kept_classes ? min_size : 0;
  r.anonymous = r.suppressed <= limit_;
  return r;
}

void Checker::store_classes(const Levels& target, const GroupTable& table) {
  const auto& classes = table.classes();
  StoredClasses s;
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
      for (const auto& d : table.distribution(static_cast<uint32_t>(i))) s.dist.push_back(d);
      s.dist_offsets.push_back(static_cast<uint32_t>(s.dist.size()));
    }
  }
  if (person_) {
    s.person_offsets.push_back(0);
    for (size_t i = 0; i < classes.size(); ++i) {
      const auto p = table.persons(static_cast<uint32_t>(i));
      s.persons.insert(s.persons.end(), p.begin(), p.end());
      s.person_offsets.push_back(static_cast<uint32_t>(s.persons.size()));
    }
  }
  history_.store(std::move(s));
}

QualityValue Checker::evaluate_last(const QualityMetric& metric) const {
  return metric.evaluate(last_levels_, tables_[cur_].classes(), suppressed_list_, class_keys());
}

}  // namespace kanon::engine
