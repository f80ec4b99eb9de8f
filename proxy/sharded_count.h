// ShardedCount: a count that many I/O threads change often and few read,
// kept as one counter per shard, each on its own cache line, so that two
// threads changing it do not pass the line back and forth. Readers add the
// shards up; a shard may go below zero, the total does not.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kanon::proxy {

class ShardedCount {
 public:
  static constexpr size_t kShards = 16;  // I/O threads beyond share shards

  void add(size_t shard, int32_t change) {
    shards_[shard % kShards].value.fetch_add(change, std::memory_order_relaxed);
  }
  uint32_t total() const {
    int64_t sum = 0;
    for (const auto& s : shards_) sum += s.value.load(std::memory_order_relaxed);
    return sum > 0 ? static_cast<uint32_t>(sum) : 0;
  }

 private:
  struct alignas(64) Shard {
    std::atomic<int32_t> value{0};
  };
  std::array<Shard, kShards> shards_{};
};

}  // namespace kanon::proxy
