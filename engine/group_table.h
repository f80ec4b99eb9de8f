// The groupify operator: an open-addressing hash table of equivalence classes
// keyed by transformed rows. Each class keeps the index of a representative
// row and a row count, which is all that roll-up and stored classes need. Keys are
// either rows of an int32 buffer (add(): the key lives at buffer[rep]) or,
// when every generalized code of a row packs into 64 bits, that packed word
// (add_packed(): the key lives in the class and in its slot, so a probe
// touches one cache line and compares one word). One table uses one kind of
// key between clear()s. With l-diversity on, the table also collects (class,
// sensitive value, count) triples, aggregated by compact(); in person mode
// (k counts distinct persons) it collects (class, person) pairs, made into a
// duplicate-free person list per class by compact_persons(). Counts
// add up under roll-up, persons do not (one person may sit in several merged
// classes), so the lists are what roll-up and stored classes carry forward.
//
// Not thread-safe. add() does not allocate once the table has grown to its
// working size.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "engine/privacy_model.h"

namespace kanon::engine {

struct GroupClass {
  uint32_t hash;
  uint32_t rep;
  uint32_t count;
  uint32_t slot;
  uint64_t key;  // packed key (add_packed() only)
};

struct SensitiveTriple {
  uint32_t cls;
  int32_t value;
  uint32_t count;
};

class GroupTable {
 public:
  GroupTable() { grow(1024); }

  void clear();
  // Prepares the table for add_packed(); REQUIRES: empty.
  void use_packed_keys() {
    packed_ = true;
    packed_slots_.assign(slots_.size(), PackedSlot{0, 0});
  }
  // Adds `count` rows whose key is buffer[row]; returns the class index.
  uint32_t add(const int32_t* buffer, size_t width, uint32_t row, uint32_t count, uint32_t hash) {
    const int32_t* key = buffer + static_cast<size_t>(row) * width;
    uint32_t pos = hash & mask_;
    for (;;) {
      const uint32_t s = slots_[pos];
      if (s == 0) break;
      GroupClass& c = classes_[s - 1];
      if (c.hash == hash &&
          std::memcmp(buffer + static_cast<size_t>(c.rep) * width, key, width * 4) == 0) {
        c.count += count;
        return s - 1;
      }
      pos = (pos + 1) & mask_;
    }
    const uint32_t idx = size_++;
    classes_[idx] = {hash, row, count, pos, 0};
    slots_[pos] = idx + 1;
    if (size_ * 2 > slots_.size()) [[unlikely]]
      grow(slots_.size() * 2);
    return idx;
  }
  // Adds `count` rows with packed key `key`, represented by `row`. Inlined
  // into the scan loops; only growing the table is out of line.
  [[gnu::always_inline]] uint32_t add_packed(uint64_t key, uint32_t row, uint32_t count) {
    const uint32_t hash = hash_packed(key);
    uint32_t pos = hash & mask_;
    for (;;) {
      const PackedSlot& p = packed_slots_[pos];
      if (p.cls == 0) break;
      if (p.key == key) {
        classes_[p.cls - 1].count += count;
        return p.cls - 1;
      }
      pos = (pos + 1) & mask_;
    }
    const uint32_t idx = size_++;
    classes_[idx] = {hash, row, count, pos, key};
    packed_slots_[pos] = {key, idx + 1};
    if (size_ * 2 > packed_slots_.size()) [[unlikely]]
      grow_packed(packed_slots_.size() * 2);
    return idx;
  }
  // The low bits index the table, so every key bit must reach them (a plain
  // multiplication leaves low bits depending on low key bits only).
  static uint32_t hash_packed(uint64_t key) {
    uint64_t h = (key ^ (key >> 31)) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 29;
    return static_cast<uint32_t>(h);
  }

  size_t size() const { return size_; }
  std::span<const GroupClass> classes() const { return {classes_.data(), size_}; }

  // Sensitive-value bookkeeping (l-diversity only).
  void add_sensitive(uint32_t cls, int32_t value, uint32_t count) {
    triples_.push_back({cls, value, count});
  }
  // Sorts and merges the triples; afterwards distribution(c) is valid.
  void compact();
  std::span<const SensitiveCount> distribution(uint32_t cls) const {
    return {dist_.data() + offsets_[cls], dist_.data() + offsets_[cls + 1]};
  }
  bool has_sensitive() const { return !offsets_.empty(); }

  // Person bookkeeping (person mode only).
  // REQUIRES: person >= 0 (a dictionary code).
  void add_person(uint32_t cls, int32_t person) { person_pairs_.push_back({cls, person}); }
  // Groups the pairs by class and drops duplicates; afterwards persons(c) is
  // valid. O(pairs): a counting sort by class, then a stamp per person.
  void compact_persons();
  // The distinct persons of class `cls`, in no particular order.
  std::span<const int32_t> persons(uint32_t cls) const {
    return {persons_.data() + person_offsets_[cls], persons_.data() + person_offsets_[cls + 1]};
  }

 private:
  struct PackedSlot {
    uint64_t key;
    uint32_t cls;  // 0 = empty, else class index + 1
  };
  [[gnu::noinline]] void grow(size_t capacity);
  [[gnu::noinline]] void grow_packed(size_t capacity);

  std::vector<uint32_t> slots_;           // 0 = empty, else class index + 1
  std::vector<PackedSlot> packed_slots_;  // same capacity as slots_ after use_packed_keys()
  bool packed_ = false;                   // slots_ stays all zero
  // Storage for capacity / 2 + 1 classes (the most before growing), so an
  // insertion never reallocates; the first size_ are in use.
  std::vector<GroupClass> classes_;
  uint32_t size_ = 0;
  uint32_t mask_ = 0;
  std::vector<SensitiveTriple> triples_;
  std::vector<SensitiveCount> dist_;
  std::vector<uint32_t> offsets_;
  struct PersonPair {
    uint32_t cls;
    int32_t person;
  };
  std::vector<PersonPair> person_pairs_;
  std::vector<int32_t> persons_;
  std::vector<uint32_t> person_offsets_;
  std::vector<uint32_t> person_fill_;  // compact_persons(): next free slot per class
  std::vector<uint32_t> person_seen_;  // compact_persons(): the stamp a person was last seen at
  uint32_t person_stamp_ = 0;
};

// Where the key of a class lives, for readers of a table's classes.
struct ClassKeys {
  const int32_t* buffer = nullptr;  // int32 keys: class c's key at buffer[c.rep * width]
  size_t width = 0;
  const uint8_t* shifts = nullptr;  // packed keys: code a = (c.key >> shifts[a]) & masks[a]
  const uint64_t* masks = nullptr;
  int32_t code(const GroupClass& c, size_t a) const {
    if (shifts) return static_cast<int32_t>((c.key >> shifts[a]) & masks[a]);
    return buffer[static_cast<size_t>(c.rep) * width + a];
  }
};

// Hash of a transformed row.
inline uint32_t hash_row(const int32_t* key, size_t width) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < width; ++i) {
    h = (h ^ static_cast<uint32_t>(key[i])) * 0xFF51AFD7ED558CCDull;
  }
  h ^= h >> 29;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace kanon::engine
