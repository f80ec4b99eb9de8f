// ServerContext: what every session shares with the server. Owned by Server,
// outlives every session.
#pragma once

#include <atomic>

#include "policy/server_config.h"
#include "proxy/cancel_registry.h"

namespace kanon::proxy {

struct ServerContext {
  policy::ServerConfig config;
  CancelRegistry cancels;
  std::atomic<uint32_t> active_clients{0};
};

}  // namespace kanon::proxy
