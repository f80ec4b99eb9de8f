// `snapshots:` in kanon.yaml: whether kanon shares its snapshots with the
// other kanon processes on a database (shared_snapshots.h).
#pragma once

#include <cstdint>
#include <string>

namespace kanon::settings {

struct SharingOptions {
  bool enabled = false;
  std::string replica;  // this process's name among the replicas
  uint32_t keep = 10;   // stored versions kept per table
};

}  // namespace kanon::settings
