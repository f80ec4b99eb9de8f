#include "engine/group_table.h"

#include <algorithm>

namespace kanon::engine {

void GroupTable::clear() {
  if (packed_) {
    if (classes_.size() * 8 < packed_slots_.size()) {
      for (const auto& c : classes_) packed_slots_[c.slot].cls = 0;
    } else {
      std::fill(packed_slots_.begin(), packed_slots_.end(), PackedSlot{0, 0});
    }
  } else if (classes_.size() * 8 < slots_.size()) {
    for (const auto& c : classes_) slots_[c.slot] = 0;
  } else {
    std::fill(slots_.begin(), slots_.end(), 0);
  }
  classes_.clear();
  triples_.clear();
  dist_.clear();
  offsets_.clear();
}

void GroupTable::grow(size_t capacity) {
  slots_.assign(capacity, 0);
  mask_ = static_cast<uint32_t>(capacity - 1);
  for (uint32_t i = 0; i < classes_.size(); ++i) {
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
  mask_ = static_cast<uint32_t>(capacity - 1);
  for (uint32_t i = 0; i < classes_.size(); ++i) {
    uint32_t pos = classes_[i].hash & mask_;
    while (packed_slots_[pos].cls != 0) pos = (pos + 1) & mask_;
    packed_slots_[pos] = {classes_[i].key, i + 1};
    classes_[i].slot = pos;
  }
}

uint32_t GroupTable::insert_packed(uint64_t key, uint32_t row, uint32_t count, uint32_t hash,
                                   uint32_t pos) {
  const uint32_t idx = static_cast<uint32_t>(classes_.size());
  classes_.push_back({hash, row, count, pos, key});
  packed_slots_[pos] = {key, idx + 1};
  if (classes_.size() * 2 > packed_slots_.size()) grow_packed(packed_slots_.size() * 2);
  return idx;
}

void GroupTable::compact() {
  std::sort(triples_.begin(), triples_.end(), [](const auto& a, const auto& b) {
    return a.cls != b.cls ? a.cls < b.cls : a.value < b.value;
  });
  dist_.clear();
  offsets_.assign(classes_.size() + 1, 0);
  size_t i = 0;
  for (uint32_t c = 0; c < classes_.size(); ++c) {
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
  offsets_[classes_.size()] = static_cast<uint32_t>(dist_.size());
  triples_.clear();
}

}  // namespace kanon::engine
