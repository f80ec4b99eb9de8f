#include "proxy/server_context.h"

#include "proxy/tls_contexts.h"

namespace kanon::proxy {

ServerContext::ServerContext(policy::ServerConfig config) {
  set_config(std::move(config));
}

ServerContext::~ServerContext() {
  blocking.join();
}

void ServerContext::set_config(policy::ServerConfig config) {
  auto runtime = std::make_shared<Runtime>();
  runtime->client_tls = make_client_tls_context(config.tls);
  runtime->backend_tls = make_backend_tls_context(config.backend_tls);
  runtime->config = std::make_shared<const policy::ServerConfig>(std::move(config));
  const std::lock_guard lock(mu_);
  runtime_ = std::move(runtime);
}

}  // namespace kanon::proxy
