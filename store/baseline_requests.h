// BaselineRequests: the tables REANONYMIZE is rebuilding as a new baseline
// of their release history (PolicyStore::reanonymize). reanonymize() marks
// the table before its build and clears it after, built or not; the build
// takes the mark, so only that one build is a baseline.
//
// Thread-safety: every member may be called from any thread (one lock).
#pragma once

#include <mutex>
#include <set>
#include <string>

namespace kanon::store {

class BaselineRequests {
 public:
  // The next build of `table` is a baseline.
  void insert(const std::string& table);
  // Whether the build of `table` is a baseline; true once per insert().
  bool take(const std::string& table);
  // The build asked for is over (a failed build does not leave it pending).
  void erase(const std::string& table);

 private:
  std::mutex mu_;
  std::set<std::string> pending_;
};

}  // namespace kanon::store
