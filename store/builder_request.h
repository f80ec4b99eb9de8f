// Asking the builder (shared snapshots, shared_snapshots.h): a replica that
// does not hold its replica group's builder lock asks the builder for a
// table's refresh or REANONYMIZE with a row in kanon.refresh_requests
// (SentRefreshRequest), then waits for a stored version newer than the one
// it served when it asked, or for the builder's error; when no builder holds
// the lock any more, it takes over and builds the table itself; it gives up
// after 15 minutes.
//
// ask_builder() is that decision loop alone: it reaches the store and the
// database through a BuilderRequest's hooks, all called on the asking thread
// (unit tested without a database).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace pqxx {
class connection_base;
}

namespace kanon::store {

struct BuilderRequest {
  using Clock = std::chrono::steady_clock;
  // How long ask_builder() waits for a newer version before it looks at the
  // builder's error and the lock again, and when it gives up.
  static constexpr Clock::duration kPoll = std::chrono::seconds(1);
  static constexpr Clock::duration kLimit = std::chrono::minutes(15);

  // The stored version of the table served now (0: none).
  std::function<uint64_t()> served_version;
  // Sends the request; throws when it cannot.
  std::function<void()> send;
  // The builder's error for the request; nullopt while there is none.
  // Throws when the database cannot be asked.
  std::function<std::optional<std::string>()> builder_error;
  // Waits up to `timeout` until a stored version newer than `before` is
  // served; whether one is.
  std::function<bool(uint64_t before, Clock::duration timeout)> wait_newer;
  // Publishes the table's failure.
  std::function<void(const std::string& error)> fail;
  // Takes the builder's lock; true when this replica is the builder now.
  std::function<bool()> lead;
  // Builds the table as the builder (refresh() or reanonymize()); its result.
  std::function<bool()> take_over;
  std::function<Clock::time_point()> now = [] { return Clock::now(); };
};

// Asks the builder and waits (see above): true when a newer stored version
// is served, or taking over built the table; false after a failure, which
// is published (fail).
bool ask_builder(const BuilderRequest& request);

// A refresh request in kanon.refresh_requests, and the connection it was
// sent on, kept to read the builder's answer.
class SentRefreshRequest {
 public:
  // Sends it (kanon_refresh is notified at commit); throws when it cannot.
  SentRefreshRequest(const std::string& conninfo, int32_t group, const std::string& verb,
                     const std::string& table, const std::string& replica);
  // The error the builder wrote into the request; nullopt while there is
  // none. Throws when the database cannot be asked.
  std::optional<std::string> builder_error();

 private:
  std::shared_ptr<pqxx::connection_base> conn_;  // made as a pqxx::connection
  uint64_t id_ = 0;
};

}  // namespace kanon::store
