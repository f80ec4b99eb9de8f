// CancelRegistry: maps the BackendKeyData kanon hands each client to the key
// of that client's backend connection, so a CancelRequest arriving on a new
// connection can be forwarded to the right server process.
//
// Keys given to clients are random (getrandom), so a client cannot cancel
// another client's query by guessing. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "proxy/wire/backend_messages.h"

namespace kanon::proxy {

class CancelRegistry {
 public:
  // Registers a session's backend key and returns the key for its client.
  wire::BackendKeyData add(const wire::BackendKeyData& backend_key);
  void remove(const wire::BackendKeyData& client_key);
  // The backend key for a client key, if that session is still open.
  std::optional<wire::BackendKeyData> find(const wire::BackendKeyData& client_key) const;
  size_t size() const;

 private:
  static uint64_t pack(const wire::BackendKeyData& k) {
    return (uint64_t{k.process_id} << 32) | k.secret_key;
  }
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, wire::BackendKeyData> keys_;
};

}  // namespace kanon::proxy
