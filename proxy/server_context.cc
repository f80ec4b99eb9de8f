#include "proxy/server_context.h"

#include <fmt/format.h>

#include <algorithm>

#include "proxy/tls_contexts.h"

namespace kanon::proxy {

ServerContext::ServerContext(settings::ServerConfig config)
    : io_threads(settings::or_one_per_core(config.threads), config.pack_sessions) {
  set_config(std::move(config));
}

ServerContext::~ServerContext() {
  blocking.join();
}

void ServerContext::set_config(settings::ServerConfig config) {
  auto runtime = std::make_shared<Runtime>();
  runtime->client_tls = make_client_tls_context(config.tls);
  runtime->backend_tls = make_backend_tls_context(config.backend_tls);
  runtime->config = std::make_shared<const settings::ServerConfig>(std::move(config));
  const std::lock_guard lock(mu_);
  runtime_ = std::move(runtime);
}

std::string ServerContext::shutdown_state() const {
  switch (shutdown_phase.load()) {
    case ShutdownPhase::kServing:
      break;
    case ShutdownPhase::kLameDuck: {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          lame_duck_ends.load() - std::chrono::steady_clock::now());
      return fmt::format(
          "lame duck: new connections are still served for {} ms more (shutdown_lame_duck), "
          "then the drain begins",
          std::max<int64_t>(0, left.count()));
    }
    case ShutdownPhase::kDraining:
      return "draining: no new connections; sessions end when idle between transactions";
  }
  return "serving";
}

}  // namespace kanon::proxy
