#include "store/snapshot_board.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

namespace kanon::store {

namespace {

std::atomic<uint64_t> next_store_id{1};
// Versions of pinned snapshots (pin_tables): above any store's own.
std::atomic<uint64_t> next_pinned_version{uint64_t{1} << 62};

}  // namespace

const policy::TableSnapshot* PolicySnapshot::find(const std::string& qualified) const {
  const auto it = tables.find(qualified);
  return it == tables.end() ? nullptr : it->second.get();
}

std::shared_ptr<const PolicySnapshot> pin_tables(std::shared_ptr<const PolicySnapshot> pinned,
                                                 std::shared_ptr<const PolicySnapshot> current) {
  if (!pinned || !current || pinned == current || pinned->store != current->store ||
      pinned->tables == current->tables)
    return current;
  auto s = std::make_shared<PolicySnapshot>(*current);
  s->tables = pinned->tables;
  s->errors = pinned->errors;
  s->version = next_pinned_version++;
  return s;
}

std::string renamed_to(const policy::TableSnapshot& served, const catalog::CatalogFacts& catalog) {
  if (served.info.oid == 0) return {};
  const catalog::RelationFacts* now = catalog.relation(served.info.oid);
  if (!now || (now->schema == served.info.schema && now->name == served.info.table)) return {};
  return now->schema + "." + now->name;
}

std::string refused_rename(const policy::TableSnapshot& served,
                           const catalog::CatalogFacts& catalog) {
  const std::string now = renamed_to(served, catalog);
  if (now.empty()) return {};
  return fmt::format(
      "the table this policy protected (OID {}) was renamed to {} and stays protected under "
      "that name with the previous tree; {}.{} is not built again until the policy names the "
      "table it means (RELOAD)",
      served.info.oid, now, served.info.schema, served.info.table);
}

SnapshotBoard::SnapshotBoard(std::vector<std::string> listed) {
  auto s = std::make_shared<PolicySnapshot>();
  s->store = next_store_id++;
  s->listed = std::move(listed);
  current_ = std::move(s);
}

std::shared_ptr<const PolicySnapshot> SnapshotBoard::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

void SnapshotBoard::publish(const std::string& table,
                            std::shared_ptr<const policy::TableSnapshot> built,
                            const std::string& error,
                            std::shared_ptr<const catalog::CatalogFacts> catalog,
                            const std::string* catalog_error, bool withdraw) {
  std::unique_lock lock(mu_);
  if (built && built->shared_version > 0)
    if (const auto* served = current_->find(table);
        served && served->shared_version >= built->shared_version)
      return;  // this stored version (loaded meanwhile) or a newer one is served already
  // Backstop for a catalog read after the build began: a build of whatever
  // holds the name now never replaces the tree of a renamed table.
  std::string refused;
  const catalog::CatalogFacts* facts = catalog ? catalog.get() : current_->catalog.get();
  if (built && facts)
    if (const auto* served = current_->find(table); served && served->info.oid != built->info.oid)
      refused = refused_rename(*served, *facts);
  if (!refused.empty()) built.reset();
  const std::string& why = refused.empty() ? error : refused;
  auto next = std::make_shared<PolicySnapshot>(*current_);
  next->version = current_->version + 1;
  const bool failed = !built;  // `error` means nothing after a success
  if (built) {
    next->tables[table] = std::move(built);
    next->errors.erase(table);
  } else {
    next->errors[table] = why;
    if (withdraw) next->tables.erase(table);
  }
  if (catalog) {
    next->catalog = std::move(catalog);
    next->catalog_error.clear();
  } else if (catalog_error) {
    next->catalog_error = *catalog_error;
  }
  current_ = std::move(next);
  published_.notify_all();
  if (!listener_) return;
  const auto listener = listener_;
  const auto snapshot = current_;  // keeps the table's snapshot alive for the call
  lock.unlock();
  listener(table, snapshot->find(table),
           !failed       ? std::string()
           : why.empty() ? std::string("unknown error")
                         : why);
}

void SnapshotBoard::publish_catalog(std::shared_ptr<const catalog::CatalogFacts> catalog,
                                    const std::string& error) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<PolicySnapshot>(*current_);
  next->version = current_->version + 1;
  if (catalog) {
    next->catalog = std::move(catalog);
    next->catalog_error.clear();
  } else {
    next->catalog_error = error;
  }
  current_ = std::move(next);
}

void SnapshotBoard::relist(std::vector<std::string> listed) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<PolicySnapshot>(*current_);
  next->version = current_->version + 1;
  next->listed = std::move(listed);
  auto keep = [&](const std::string& name) {
    return std::find(next->listed.begin(), next->listed.end(), name) != next->listed.end();
  };
  std::erase_if(next->tables, [&](const auto& kv) { return !keep(kv.first); });
  std::erase_if(next->errors, [&](const auto& kv) { return !keep(kv.first); });
  current_ = std::move(next);
}

void SnapshotBoard::set_publish_listener(PublishListener listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

bool SnapshotBoard::wait_for(std::chrono::steady_clock::duration timeout,
                             const std::function<bool(const PolicySnapshot&)>& done) const {
  std::unique_lock lock(mu_);
  published_.wait_for(lock, timeout, [&] { return done(*current_); });
  return done(*current_);
}

}  // namespace kanon::store
