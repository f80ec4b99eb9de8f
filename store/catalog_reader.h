// CatalogReader: a PolicyStore's reads of the catalog (catalog_facts.h) on
// a service connection it keeps, so its statements stay prepared and its
// backend's catalog caches warm (a new connection costs ~5x). When the kept
// connection broke (a server restart), a read is made once more on a new
// one. Each read reuses the served facts' built-in functions.
//
// One lock, the reader's, is held for a whole read and its publish (the
// Publish callback runs under it), so reads are published in the order they
// were made, and for anything else done on the kept connection (the stored
// snapshots ReplicaSync adopts on it). The coverage (catalog_coverage.h)
// says which catalog notifications the published facts cover.
//
// Thread-safety: every member may be called from any thread. The hooks and
// the callbacks are called under the reader's lock: they must not call the
// reader.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog_facts.h"
#include "store/catalog_coverage.h"

namespace pqxx {
class connection_base;
}

namespace kanon::store {

class CatalogReader {
 public:
  using Facts = std::shared_ptr<const catalog::CatalogFacts>;
  // Publishes a read: the facts, or null with the read's error.
  using Publish = std::function<void(Facts facts, const std::string& error)>;

  struct Hooks {
    // The facts served now (null before the first read): their built-in
    // functions are reused.
    std::function<Facts()> served;
    // Catalog notifications received so far (CatalogWatcher::notifications).
    std::function<uint64_t()> notifications;
    // Publishes a refresh (the facts alone, in a new snapshot version).
    Publish publish;
  };

  // `conninfo` empty: a store without a database, which reads nothing.
  CatalogReader(std::string conninfo, Hooks hooks);
  ~CatalogReader();
  CatalogReader(const CatalogReader&) = delete;
  CatalogReader& operator=(const CatalogReader&) = delete;

  bool enabled() const { return !conninfo_.empty(); }

  // Reads the facts and publishes them (or the failure) with `publish` (a
  // build publishes them with its table); true when read. Nothing without a
  // conninfo (false).
  bool read(const Publish& publish);
  // Reads the facts and publishes them with the hooks' `publish`; a read
  // that succeeds covers the notifications received before it began.
  bool refresh();
  // refresh(), unless the published facts cover `notifications` (true).
  // Any role may NOTIFY kanon_catalog, so a notification is a hint: when the
  // generation sequence still stands at the served facts' generation, no DDL
  // they miss was notified (the event trigger advances it before its commit,
  // so before its notification), and the notifications count as covered
  // without a read. One query instead of a whole read: a session that sends
  // NOTIFY kanon_catalog in a loop costs the others nothing like a read each.
  bool refresh_covering(uint64_t notifications);
  // For a caller that decided with facts of generation `decided`: true
  // when the served facts are newer already (read meanwhile, e.g. by the
  // watcher), or when the generation sequence has moved past them (a DDL
  // they miss has run, committed or not: the read waits for its commit) and
  // they were read again. False when they stand (or either generation is
  // unknown, or a read for the same generation failed before: a DDL
  // transaction left open holds it, and each read would wait lock_timeout).
  // Throws when the database cannot be asked. A restricted statement's
  // denial is decided again with it before it is sent
  // (proxy/session_lookup.cc): the watcher's notification may not have
  // arrived yet.
  bool refresh_if_moved(int64_t decided);
  const CatalogCoverage& coverage() const { return coverage_; }

  // Whether a persistent relation or function has one of these names
  // (catalog::any_persistent_object_named). Throws when the database cannot
  // be asked; true without a conninfo (nobody can tell: not absent).
  bool any_persistent_object_named(const std::vector<std::string>& names);
  // catalog::unsafe_temporary_object on the same connection; nullopt when
  // the reader is off. Throws when the database cannot be asked.
  std::optional<std::string> unsafe_temporary_object(const std::vector<std::string>& names);

  // The event triggers that fire now (catalog::read_event_triggers), on the
  // kept connection. Throws when the database cannot be asked; empty
  // without a conninfo.
  std::vector<catalog::EventTriggerFacts> read_event_triggers();

  // Runs `use` on the kept connection, under the reader's lock (opens one
  // when none is kept; no second attempt: exceptions reach the caller).
  void on_connection(const std::function<void(pqxx::connection_base&)>& use);
  // Drops the kept connection (the caller found it broken).
  void drop_connection();

 private:
  // read() (`covering` false) or refresh().
  bool publish_read(const Publish& publish, bool covering);
  Facts read_locked(std::string& error);  // mu_ held
  // The generation sequence stands at the served facts' generation (mu_
  // held); false when either is unknown or the database cannot be asked.
  bool generation_unmoved_locked();
  // The generation sequence's value now (mu_ held); throws when the
  // database cannot be asked.
  int64_t generation_now_locked();
  pqxx::connection_base& kept();  // the kept connection, opened if none (mu_ held)
  // Runs `use` on the kept connection (mu_ held), once more on a new one
  // when it broke.
  template <typename Use>
  auto with_connection(Use&& use);

  const std::string conninfo_;
  const Hooks hooks_;
  std::mutex mu_;  // one read and publish at a time, in order; the kept connection
  int64_t unreadable_generation_ = 0;  // refresh_if_moved's last failed read (mu_)
  CatalogCoverage coverage_;
  std::shared_ptr<pqxx::connection_base> conn_;  // made as a pqxx::connection
};

}  // namespace kanon::store
