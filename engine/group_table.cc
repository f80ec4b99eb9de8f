#include "engine/group_table.h"

#include <algorithm>

namespace kanon::engine {

void GroupTable::clear() {
  // At most half of the slots are used: resetting them one by one touches
  // fewer bytes than a fill.
  if (packed_) {
    for (const auto& c : classes()) packed_slots_[c.slot].cls = 0;
  } else if (size_ * 8 < slots_.size()) {
    for (const auto& c : classes()) slots_[c.slot] = 0;
  } else {
    std::fill(slots_.begin(), slots_.end(), 0);
  }
  size_ = 0;
  triples_.clear();
  dist_.clear();
  offsets_.clear();
  person_pairs_.clear();
  persons_.clear();
  person_offsets_.clear();
}

void GroupTable::grow(size_t capacity) {
  slots_.assign(capacity, 0);
  classes_.resize(capacity / 2 + 1);
  mask_ = static_cast<uint32_t>(capacity - 1);
  for (uint32_t i = 0; i < size_; ++i) {
    uint32_t pos = classes_[i].hash & mask_;
    while (slots_[pos] != 0) pos = (pos + 1) & mask_;
    slots_[pos] = i + 1;
    classes_[i].slot = pos;
  }
}

void GroupTable::grow_packed(size_t capacity) {
  // slots_ stays all zero in packed use but keeps the capacity.
  slots_.assign(capacity, 0);
  packed_slots_.assign(capacity, PackedSlot{0, 0});
  classes_.resize(capacity / 2 + 1);
  mask_ = static_cast<uint32_t>(capacity - 1);
  for (uint32_t i = 0; i < size_; ++i) {
    uint32_t pos = classes_[i].hash & mask_;
    while (packed_slots_[pos].cls != 0) pos = (pos + 1) & mask_;
    packed_slots_[pos] = {classes_[i].key, i + 1};
    classes_[i].slot = pos;
  }
}

void GroupTable::compact() {
  std::sort(triples_.begin(), triples_.end(), [](const auto& a, const auto& b) {
    return a.cls != b.cls ? a.cls < b.cls : a.value < b.value;
  });
  dist_.clear();
  offsets_.assign(size_ + 1, 0);
  size_t i = 0;
  for (uint32_t c = 0; c < size_; ++c) {
    offsets_[c] = static_cast<uint32_t>(dist_.size());
    while (i < triples_.size() && triples_[i].cls == c) {
      if (!dist_.empty() && dist_.size() > offsets_[c] && dist_.back().value == triples_[i].value) {
        dist_.back().count += triples_[i].count;
      } else {
        dist_.push_back({triples_[i].value, triples_[i].count});
      }
      ++i;
    }
  }
  offsets_[size_] = static_cast<uint32_t>(dist_.size());
  triples_.clear();
}

void GroupTable::compact_persons() {
  // One 64-bit key per pair sorts faster than a pair of fields.
  std::sort(person_pairs_.begin(), person_pairs_.end());
  persons_.clear();
  person_offsets_.assign(size_ + 1, 0);
  uint32_t c = 0;
  uint64_t last = ~0ull;
  for (const uint64_t p : person_pairs_) {
    if (p == last) continue;
    last = p;
    const auto cls = static_cast<uint32_t>(p >> 32);
    while (c < cls) person_offsets_[++c] = static_cast<uint32_t>(persons_.size());
    persons_.push_back(static_cast<int32_t>(static_cast<uint32_t>(p)));
  }
  while (c < size_) person_offsets_[++c] = static_cast<uint32_t>(persons_.size());
  person_pairs_.clear();
}

}  // namespace kanon::engine
