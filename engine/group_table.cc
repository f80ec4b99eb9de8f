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
  // A comparison sort of the pairs cost ~10x the rest of a check; the lists
  // need no order, only no duplicates.
  person_offsets_.assign(size_ + 1, 0);
  for (const auto& p : person_pairs_) ++person_offsets_[p.cls + 1];
  for (uint32_t c = 0; c < size_; ++c) person_offsets_[c + 1] += person_offsets_[c];
  person_fill_.assign(person_offsets_.begin(), person_offsets_.end() - 1);
  persons_.resize(person_pairs_.size());
  for (const auto& p : person_pairs_) persons_[person_fill_[p.cls]++] = p.person;
  // Each class gets a fresh stamp; a person is kept the first time its class
  // sees it. In place: the kept entries never overtake the ones read.
  uint32_t out = 0;
  for (uint32_t c = 0; c < size_; ++c) {
    if (++person_stamp_ == 0) {  // wrapped: forget every stamp once
      std::fill(person_seen_.begin(), person_seen_.end(), 0);
      person_stamp_ = 1;
    }
    const uint32_t begin = person_offsets_[c], end = person_offsets_[c + 1];
    person_offsets_[c] = out;
    for (uint32_t i = begin; i < end; ++i) {
      const auto v = static_cast<uint32_t>(persons_[i]);
      if (v >= person_seen_.size()) [[unlikely]]
        person_seen_.resize(std::max<size_t>(v + 1, person_seen_.size() * 2), 0);
      if (person_seen_[v] == person_stamp_) continue;
      person_seen_[v] = person_stamp_;
      persons_[out++] = persons_[i];
    }
  }
  person_offsets_[size_] = out;
  persons_.resize(out);
  person_pairs_.clear();
}

}  // namespace kanon::engine
