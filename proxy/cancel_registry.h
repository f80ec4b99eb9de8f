// CancelRegistry: maps the BackendKeyData kanon hands each client to the key
// of that client's backend connection, so a CancelRequest arriving on a new
// connection can be forwarded to the right server process.
//
// Keys given to clients are random (getrandom), so a client cannot cancel
// another client's query by guessing. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
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

  // A session kanon answers itself (the admin console) has no backend to
  // cancel: a CancelRequest with its key sets `flag` instead.
  wire::BackendKeyData add_local(std::shared_ptr<std::atomic<bool>> flag);
  // Sets the flag of a local session's key; false when the key is not one.
  bool cancel_local(const wire::BackendKeyData& client_key);

 private:
  wire::BackendKeyData fresh_key_locked() const;
  static uint64_t pack(const wire::BackendKeyData& k) {
    return (uint64_t{k.process_id} << 32) | k.secret_key;
  }
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, wire::BackendKeyData> keys_;
  std::unordered_map<uint64_t, std::shared_ptr<std::atomic<bool>>> local_;
};

}  // namespace kanon::proxy
