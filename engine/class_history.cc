#include "engine/class_history.h"

#include <algorithm>

namespace kanon::engine {

const StoredClasses* ClassHistory::find(const Levels& target) {
  StoredClasses* best = nullptr;
  for (auto& s : stored_) {
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

bool ClassHistory::worth_storing(size_t classes, size_t rows, size_t source_classes) const {
  if (options_.max_stored == 0) return false;
  if (static_cast<double>(classes) > options_.max_relative_size * static_cast<double>(rows)) {
    return false;
  }
  if (source_classes > 0 &&
      static_cast<double>(classes) > options_.max_relative_to_source * source_classes) {
    return false;
  }
  return true;
}

void ClassHistory::store(StoredClasses classes) {
  if (stored_.size() >= options_.max_stored && obsolete_) {
    std::erase_if(stored_, [&](const StoredClasses& s) { return obsolete_(s.levels); });
  }
  if (stored_.size() >= options_.max_stored) {
    auto lru = std::min_element(stored_.begin(), stored_.end(), [](const auto& a, const auto& b) {
      return a.last_used < b.last_used;
    });
    *lru = std::move(stored_.back());
    stored_.pop_back();
  }
  classes.last_used = ++clock_;
  stored_.push_back(std::move(classes));
}

size_t ClassHistory::bytes() const {
  size_t b = 0;
  for (const auto& s : stored_) {
    b += s.reps.capacity() * 8 + s.keys.capacity() * 8 +
         s.dist.capacity() * sizeof(SensitiveCount) + s.dist_offsets.capacity() * 4;
  }
  return b;
}

}  // namespace kanon::engine
