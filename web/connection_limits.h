// ConnectionLimits: how many connections the web console holds at once, in
// all and per client address. Without a per-address limit one client that
// opens 64 connections and sends nothing locks every administrator out
// until its requests time out (found by an adversarial probe). A Slot is
// one admitted connection; its destructor gives the place back.
// Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace kanon::web {

class ConnectionLimits : public std::enable_shared_from_this<ConnectionLimits> {
 public:
  class Slot {
   public:
    Slot(std::shared_ptr<ConnectionLimits> owner, std::string address)
        : owner_(std::move(owner)), address_(std::move(address)) {}
    Slot(Slot&&) = default;
    Slot& operator=(Slot&&) = default;
    ~Slot();

   private:
    std::shared_ptr<ConnectionLimits> owner_;
    std::string address_;
  };

  ConnectionLimits(size_t total, size_t per_address) : total_(total), per_address_(per_address) {}

  // A place for a connection from `address`, or nullopt when the console
  // holds `total` connections or `per_address` from that address.
  std::optional<Slot> admit(const std::string& address);
  size_t size() const;
  size_t from(const std::string& address) const;

 private:
  void release(const std::string& address);

  const size_t total_, per_address_;
  mutable std::mutex mu_;
  size_t held_ = 0;
  std::map<std::string, size_t> by_address_;
};

}  // namespace kanon::web
