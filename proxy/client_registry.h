// ClientRegistry: who is connected, for SHOW CLIENTS. Sessions add
// themselves once they know their login and remove themselves when they end.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kanon::proxy {

struct ClientInfo {
  uint64_t id = 0;
  std::string user;
  std::string database;
  std::string peer;
  std::string application;
  std::string access;  // "exempt", "restricted", "partly exempt" or "admin"
  bool tls = false;
  std::chrono::system_clock::time_point since;
};

class ClientRegistry {
 public:
  uint64_t add(ClientInfo info);
  void remove(uint64_t id);
  std::vector<ClientInfo> list() const;

 private:
  mutable std::mutex mu_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, ClientInfo> clients_;
};

}  // namespace kanon::proxy
