#include "engine/algorithm.h"

namespace kanon::engine {

const base::NameTable<Algorithm>& algorithm_names() {
  static const base::NameTable<Algorithm> kNames{{Algorithm::kFlash, "flash"},
                                                 {Algorithm::kBestFirst, "bfs"},
                                                 {Algorithm::kMondrian, "mondrian"}};
  return kNames;
}

}  // namespace kanon::engine
