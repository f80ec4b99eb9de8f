#include "policy/order_inference.h"

#include <cmath>
#include <map>

namespace kanon::policy {

bool OrderGuess::leaks() const {
  if (hidden < 10) return false;
  const double excess = rate() - expected;
  const double spread = std::sqrt(std::max(expected * (1 - expected), 1e-4) / hidden);
  return excess >= 0.25 && excess >= 4 * spread;
}

namespace {

// Whether rows i and i + 1 are stored next to each other.
bool adjacent(const std::vector<int64_t>& block, size_t i) {
  return block[i + 1] == block[i] || block[i + 1] == block[i] + 1;
}

OrderGuess guess_column(const std::vector<int64_t>& block, const StoredRows::Column& c) {
  const size_t n = block.size();
  OrderGuess g{c.name};
  if (n == 0) return g;
  // The nearest row showing a value before and after each row, within its
  // run of adjacent blocks (a NULL shown reads as a hidden one).
  constexpr size_t kNone = static_cast<size_t>(-1);
  const auto shows = [&](size_t i) { return c.shown[i] && c.raw[i].has_value(); };
  std::vector<size_t> before(n, kNone), after(n, kNone);
  for (size_t i = 1; i < n; ++i)
    if (adjacent(block, i - 1)) before[i] = shows(i - 1) ? i - 1 : before[i - 1];
  for (size_t i = n - 1; i-- > 0;)
    if (adjacent(block, i)) after[i] = shows(i + 1) ? i + 1 : after[i + 1];
  std::map<std::string, size_t> hidden_values, shown_values;
  size_t shown = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!c.raw[i]) continue;
    if (c.shown[i]) {
      ++shown_values[*c.raw[i]];
      ++shown;
      continue;
    }
    const size_t b = before[i], a = after[i];
    if (b == kNone && a == kNone) continue;
    const size_t nearest = b == kNone ? a : a == kNone || i - b <= a - i ? b : a;
    ++g.hidden;
    ++hidden_values[*c.raw[i]];
    if (c.raw[nearest] == c.raw[i]) ++g.guessed;
  }
  if (g.hidden && shown)
    for (const auto& [value, count] : hidden_values) {
      const auto s = shown_values.find(value);
      if (s != shown_values.end())
        g.expected += static_cast<double>(count) / g.hidden * static_cast<double>(s->second) /
                      static_cast<double>(shown);
    }
  return g;
}

}  // namespace

std::vector<OrderGuess> guess_from_order(const StoredRows& rows) {
  std::vector<OrderGuess> out;
  for (const auto& c : rows.columns) out.push_back(guess_column(rows.block, c));
  return out;
}

}  // namespace kanon::policy
