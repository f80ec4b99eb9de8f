#include "proxy/client_registry.h"

namespace kanon::proxy {

uint64_t ClientRegistry::add(ClientInfo info) {
  const std::lock_guard lock(mu_);
  info.id = next_id_++;
  const uint64_t id = info.id;
  clients_.emplace(id, std::move(info));
  return id;
}

void ClientRegistry::remove(uint64_t id) {
  const std::lock_guard lock(mu_);
  clients_.erase(id);
}

std::vector<ClientInfo> ClientRegistry::list() const {
  const std::lock_guard lock(mu_);
  std::vector<ClientInfo> out;
  out.reserve(clients_.size());
  for (const auto& [id, info] : clients_) out.push_back(info);
  return out;
}

}  // namespace kanon::proxy
