#include "store/catalog_reader.h"

#include <fmt/core.h>

#include <pqxx/pqxx>

#include "catalog/catalog_watch.h"

namespace kanon::store {

CatalogReader::CatalogReader(std::string conninfo, Hooks hooks)
    : conninfo_(std::move(conninfo)), hooks_(std::move(hooks)) {}

CatalogReader::~CatalogReader() = default;

pqxx::connection_base& CatalogReader::kept() {
  if (!conn_ || !conn_->is_open()) conn_ = std::make_shared<pqxx::connection>(conninfo_);
  return *conn_;
}

template <typename Use>
auto CatalogReader::with_connection(Use&& use) {
  for (int attempt = 0;; ++attempt) {
    try {
      return use(kept());
    } catch (const pqxx::broken_connection&) {
      conn_.reset();
      if (attempt > 0) throw;
    }
  }
}

CatalogReader::Facts CatalogReader::read_locked(std::string& error) {
  const auto previous = hooks_.served();
  try {
    return with_connection([&](pqxx::connection_base& conn) {
      return std::make_shared<const catalog::CatalogFacts>(
          catalog::read_catalog_facts(conn, previous.get()));
    });
  } catch (const std::exception& e) {
    conn_.reset();
    error = e.what();
  }
  return nullptr;
}

bool CatalogReader::read(const Publish& publish) {
  return publish_read(publish, false);
}

bool CatalogReader::refresh() {
  return publish_read(hooks_.publish, true);
}

bool CatalogReader::publish_read(const Publish& publish, bool covering) {
  if (!enabled()) return false;
  std::lock_guard lock(mu_);
  const uint64_t notifications = covering ? hooks_.notifications() : 0;  // before the read begins
  std::string error;
  auto facts = read_locked(error);
  const bool ok = facts != nullptr;
  publish(std::move(facts), error);
  coverage_.published(notifications, ok);
  return ok;
}

bool CatalogReader::generation_unmoved_locked() {
  if (!enabled()) return false;
  const auto served = hooks_.served();
  // 0: the facts were read without the sequence (no event trigger).
  if (!served || served->generation == 0) return false;
  try {
    return generation_now_locked() == served->generation;
  } catch (const std::exception&) {
    conn_.reset();
    return false;  // the read that follows reports what is wrong
  }
}

int64_t CatalogReader::generation_now_locked() {
  return with_connection([&](pqxx::connection_base& conn) {
    pqxx::nontransaction tx(conn);
    const auto r =
        tx.exec(fmt::format("SELECT s.last_value FROM {} s", catalog::kGenerationSequence));
    return r[0][0].as<int64_t>();
  });
}

bool CatalogReader::refresh_if_moved(int64_t decided) {
  if (!enabled()) return false;
  int64_t now = 0;
  {
    std::lock_guard lock(mu_);
    const auto served = hooks_.served();
    if (!served || served->generation == 0) return false;
    // Read since the caller decided (the watcher's refresh, another
    // session's recheck): nothing to wait for.
    if (served->generation > decided) return true;
    now = generation_now_locked();
    if (now == served->generation || now == unreadable_generation_) return false;
  }
  if (refresh()) return true;
  // Most likely a DDL transaction left open holds the generation lock (the
  // read waited lock_timeout for it): the next caller does not wait again
  // for the same generation.
  std::lock_guard lock(mu_);
  unreadable_generation_ = now;
  return false;
}

bool CatalogReader::refresh_covering(uint64_t notifications) {
  {
    std::lock_guard lock(mu_);
    if (coverage_.covers(notifications)) return true;
    if (generation_unmoved_locked()) {
      coverage_.published(notifications, true);
      return true;
    }
  }
  return refresh();
}

bool CatalogReader::any_persistent_object_named(const std::vector<std::string>& names) {
  if (!enabled()) return true;  // nobody can tell: not absent
  std::lock_guard lock(mu_);
  return with_connection([&](pqxx::connection_base& conn) {
    return catalog::any_persistent_object_named(conn, names);
  });
}

std::optional<std::string> CatalogReader::unsafe_temporary_object(
    const std::vector<std::string>& names) {
  if (!enabled()) return std::nullopt;
  std::lock_guard lock(mu_);
  return with_connection(
      [&](pqxx::connection_base& conn) { return catalog::unsafe_temporary_object(conn, names); });
}

std::vector<catalog::EventTriggerFacts> CatalogReader::read_event_triggers() {
  if (!enabled()) return {};
  std::lock_guard lock(mu_);
  return with_connection(
      [&](pqxx::connection_base& conn) { return catalog::read_event_triggers(conn); });
}

void CatalogReader::on_connection(const std::function<void(pqxx::connection_base&)>& use) {
  std::lock_guard lock(mu_);
  use(kept());
}

void CatalogReader::drop_connection() {
  std::lock_guard lock(mu_);
  conn_.reset();
}

}  // namespace kanon::store
