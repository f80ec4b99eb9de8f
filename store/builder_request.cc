#include "store/builder_request.h"

#include <pqxx/pqxx>

#include "store/shared_snapshots.h"

namespace kanon::store {

bool ask_builder(const BuilderRequest& request) {
  const uint64_t before = request.served_version();
  try {
    request.send();
  } catch (const std::exception& e) {
    request.fail(std::string("cannot ask the builder for a refresh: ") + e.what());
    return false;
  }
  // The builder answers with a stored version (or an error in the request);
  // when no builder holds the lock any more, this replica takes over.
  const auto deadline = request.now() + BuilderRequest::kLimit;
  for (;;) {
    if (request.wait_newer(before, BuilderRequest::kPoll)) return true;
    try {
      if (const auto error = request.builder_error()) {
        request.fail("the builder's refresh failed: " + *error);
        return false;
      }
    } catch (const std::exception&) {
      // Asked again below if this replica becomes the builder.
    }
    if (request.lead()) return request.take_over();
    if (request.now() > deadline) {
      request.fail("the builder did not store a new version within 15 minutes");
      return false;
    }
  }
}

SentRefreshRequest::SentRefreshRequest(const std::string& conninfo, int32_t group,
                                       const std::string& verb, const std::string& table,
                                       const std::string& replica) {
  auto conn = std::make_shared<pqxx::connection>(conninfo);
  pqxx::work tx(*conn);
  id_ = ask_refresh(tx, group, verb, table, replica);
  tx.commit();
  conn_ = std::move(conn);
}

std::optional<std::string> SentRefreshRequest::builder_error() {
  pqxx::nontransaction tx(*conn_);
  return refresh_error(tx, id_);
}

}  // namespace kanon::store
