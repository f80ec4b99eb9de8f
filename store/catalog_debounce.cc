#include "store/catalog_debounce.h"

#include <algorithm>

namespace kanon::store {

void CatalogDebounce::note(uint64_t before, Clock::time_point now) {
  if (received <= before) return;
  if (before == handled) first = now;
  last = now;
}

bool CatalogDebounce::due(Clock::time_point now) const {
  return pending() && (now >= last + kQuiet || now >= first + kMaxDelay);
}

int CatalogDebounce::wait_ms(Clock::time_point now) const {
  if (!pending()) return -1;
  const auto ms_left = [now](Clock::time_point deadline) {
    return std::max<long>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
  };
  return static_cast<int>(std::min(ms_left(last + kQuiet), ms_left(first + kMaxDelay)));
}

}  // namespace kanon::store
