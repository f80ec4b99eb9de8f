#include "engine/snapshot_history.h"

#include <algorithm>

namespace kanon::engine {

const Snapshot* SnapshotHistory::find(const Levels& target) {
  Snapshot* best = nullptr;
  for (auto& s : snapshots_) {
    bool below = true;
    for (size_t i = 0; i < target.size(); ++i) {
      if (s.levels[i] > target[i]) {
        below = false;
        break;
      }
    }
    if (below && (best == nullptr || s.classes() < best->classes())) best = &s;
  }
  if (best) best->last_used = ++clock_;
  return best;
}

bool SnapshotHistory::worth_storing(size_t classes, size_t rows, size_t source_classes) const {
  if (options_.max_snapshots == 0) return false;
  if (static_cast<double>(classes) > options_.max_relative_size * static_cast<double>(rows)) {
    return false;
  }
  if (source_classes > 0 &&
      static_cast<double>(classes) > options_.max_relative_to_source * source_classes) {
    return false;
  }
  return true;
}

void SnapshotHistory::store(Snapshot snapshot) {
  if (snapshots_.size() >= options_.max_snapshots && obsolete_) {
    std::erase_if(snapshots_, [&](const Snapshot& s) { return obsolete_(s.levels); });
  }
  if (snapshots_.size() >= options_.max_snapshots) {
    auto lru =
        std::min_element(snapshots_.begin(), snapshots_.end(),
                         [](const auto& a, const auto& b) { return a.last_used < b.last_used; });
    *lru = std::move(snapshots_.back());
    snapshots_.pop_back();
  }
  snapshot.last_used = ++clock_;
  snapshots_.push_back(std::move(snapshot));
}

size_t SnapshotHistory::bytes() const {
  size_t b = 0;
  for (const auto& s : snapshots_) {
    b += s.reps.capacity() * 8 + s.keys.capacity() * 8 +
         s.dist.capacity() * sizeof(SensitiveCount) + s.dist_offsets.capacity() * 4;
  }
  return b;
}

}  // namespace kanon::engine
