#include "policy/fingerprint.h"

#include <fmt/format.h>

#include <cstdint>
#include <string_view>

namespace kanon::policy {
namespace {

constexpr uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr uint64_t kFnvPrime = 1099511628211ULL;

// FNV-1a over `text`, continuing from `h`; a field separator keeps
// ("ab","c") apart from ("a","bc").
uint64_t fnv(uint64_t h, std::string_view text) {
  for (unsigned char c : text) h = (h ^ c) * kFnvPrime;
  return (h ^ 0x1f) * kFnvPrime;
}

std::string hex(uint64_t h) {
  return fmt::format("{:016x}", h);
}

}  // namespace

std::string policy_hash(const TablePolicy& p) {
  uint64_t h = kFnvOffset;
  const auto add = [&](std::string_view s) { h = fnv(h, s); };
  add(p.database);
  add(p.schema);
  add(p.table);
  add(std::to_string(p.k));
  add(std::to_string(p.max_nodes));
  add(to_string(p.mode));
  add(to_string(p.grants));
  add("qi");
  for (const auto& c : p.quasi_identifiers) add(c);
  add("di");
  for (const auto& d : p.direct_identifiers) {
    add(d.column);
    add(d.constant ? "=" + *d.constant : "null");
  }
  add("sensitive");
  if (p.sensitive) {
    add(p.sensitive->column);
    add(std::to_string(p.sensitive->l));
  }
  add("indexes");
  for (const auto& c : p.indexes) add(c);
  add("grant_to");
  for (const auto& r : p.grant_to) add(r);
  add("key");
  for (const auto& c : p.key) add(c);
  // What the masks call and whom k counts shape the snapshot too.
  add(p.evaluator == MaskEvaluator::kFunction ? "evaluator=function"
      : p.evaluator == MaskEvaluator::kAuto   ? "evaluator=auto"
                                              : "evaluator=sql");
  add("person");
  for (const auto& c : p.person) add(c);
  return hex(h);
}

std::string data_fingerprint(const EncodedTable& table) {
  // Order-free: the sum of one hash per distinct row and its count.
  uint64_t sum = 0;
  const size_t width = table.width();
  for (size_t row = 0; row < table.distinct_rows(); ++row) {
    uint64_t h = kFnvOffset;
    for (size_t c = 0; c < width; ++c) {
      const uint32_t code = table.code(row, c);
      const auto& dict = table.dictionary(c);
      h = fnv(h, code == kNullCode ? std::string_view("\\N") : std::string_view(dict.decode(code)));
    }
    h = fnv(h, std::to_string(table.weights()[row]));
    sum += h;
  }
  return hex(fnv(sum, std::to_string(table.total_rows())));
}

}  // namespace kanon::policy
