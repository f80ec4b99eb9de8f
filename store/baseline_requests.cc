#include "store/baseline_requests.h"

namespace kanon::store {

void BaselineRequests::insert(const std::string& table) {
  std::lock_guard lock(mu_);
  pending_.insert(table);
}

bool BaselineRequests::take(const std::string& table) {
  std::lock_guard lock(mu_);
  return pending_.erase(table) > 0;
}

void BaselineRequests::erase(const std::string& table) {
  std::lock_guard lock(mu_);
  pending_.erase(table);
}

}  // namespace kanon::store
