#include "proxy/audit_sinks.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <pqxx/pqxx>

#include "store/copy_row.h"

namespace kanon::proxy {

namespace {

constexpr const char* kColumns[] = {
    "at",          "user_name", "database_name", "client",           "application_name",
    "backend_pid", "protocol",  "fingerprint",   "statement",        "decision",
    "rule",        "object",    "tables",        "snapshot_version", "rows",
    "duration_ms", "sqlstate"};

constexpr const char* kTableDefinition =
    "at timestamptz NOT NULL, user_name text NOT NULL, database_name text NOT NULL, "
    "client text NOT NULL, application_name text NOT NULL, backend_pid integer, "
    "protocol text NOT NULL, fingerprint text, statement text, decision text NOT NULL, "
    "rule text, object text, tables text[] NOT NULL, snapshot_version bigint NOT NULL, "
    "rows bigint, duration_ms double precision NOT NULL, sqlstate text";

// {"a","b"}: a text[] literal, every element quoted.
std::string array_literal(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace

AuditFileSink::~AuditFileSink() {
  close();
}

void AuditFileSink::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool AuditFileSink::open() {
  close();
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd_ < 0) {
    error_ = fmt::format("cannot open {}: {}", path_, std::strerror(errno));
    return false;
  }
  error_.clear();
  // Whether the file ends inside a line (a write cut short before): a file
  // moved away and made again does not; the one a full disk cut does.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    torn_ = false;
    if (st.st_size > 0) {
      const int reader = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      char last = '\n';
      if (reader >= 0 && ::pread(reader, &last, 1, st.st_size - 1) == 1) torn_ = last != '\n';
      if (reader >= 0) ::close(reader);
    }
  }
  return true;
}

size_t AuditFileSink::write(const std::vector<AuditRecord>& batch) {
  if (fd_ < 0) return 0;
  // A line an earlier failed write cut short is ended first, so the records
  // after it stay one per line.
  std::string text = torn_ ? "\n" : "";
  const size_t skip = text.size();
  std::vector<size_t> ends;  // where each record's line ends in text
  ends.reserve(batch.size());
  for (const auto& r : batch) {
    append_json_line(text, r);
    ends.push_back(text.size());
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = fmt::format("cannot write {}: {}", path_, std::strerror(errno));
      close();
      const size_t whole =
          static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), done) - ends.begin());
      const size_t line_start = whole ? ends[whole - 1] : skip;
      if (done > line_start) torn_ = true;  // else a torn line from before stays torn
      return whole;
    }
    done += static_cast<size_t>(n);
    if (done >= skip) torn_ = false;
  }
  return batch.size();
}

AuditTableSink::AuditTableSink(std::string conninfo, std::string table)
    : conninfo_(std::move(conninfo)), table_(std::move(table)) {}

AuditTableSink::~AuditTableSink() = default;

bool AuditTableSink::open() {
  conn_.reset();
  try {
    auto conn = std::make_unique<pqxx::connection>(conninfo_);
    pqxx::work tx(*conn);
    // Only when missing: any DDL fails the catalog guard of every restricted
    // statement running (catalog/catalog_watch.h).
    if (tx.exec_params1("SELECT pg_catalog.to_regclass($1) IS NULL", table_)[0].as<bool>())
      tx.exec(fmt::format("CREATE TABLE IF NOT EXISTS {} ({})", table_, kTableDefinition));
    tx.commit();
    // A COPY of no rows: the columns are there and kanon may insert. Without
    // it a table whose columns were changed or whose INSERT was revoked
    // opened, was reported up, and lost the records of the statements it
    // let through until the next write failed (found by an adversarial
    // probe, with on_failure: deny).
    pqxx::work probe(*conn);
    pqxx::stream_to(probe, table_,
                    std::vector<std::string>(std::begin(kColumns), std::end(kColumns)))
        .complete();
    probe.abort();
    conn_ = std::move(conn);
    error_.clear();
    return true;
  } catch (const std::exception& e) {
    error_ = fmt::format("cannot use table {}: {}", table_, e.what());
    while (!error_.empty() && (error_.back() == '\n' || error_.back() == ' ')) error_.pop_back();
    return false;
  }
}

size_t AuditTableSink::write(const std::vector<AuditRecord>& batch) {
  if (!conn_) return 0;
  try {
    pqxx::work tx(*conn_);
    {
      pqxx::stream_to copy(tx, table_,
                           std::vector<std::string>(std::begin(kColumns), std::end(kColumns)));
      for (const auto& r : batch) {
        static const AuditSession kNobody;
        const AuditSession& s = r.session ? *r.session : kNobody;
        const std::string at = iso8601_ms(r.time);
        const std::string pid = std::to_string(s.backend_pid);
        const std::string fingerprint = r.fingerprint ? fingerprint_hex(r.fingerprint) : "";
        const std::string protocol = r.protocol;
        const std::string decision = to_string(r.decision);
        const std::string tables = array_literal(r.tables);
        const std::string version = std::to_string(r.snapshot_version);
        const std::string rows = r.rows ? std::to_string(*r.rows) : "";
        const std::string duration = fmt::format("{:.3f}", r.duration_ms);
        const auto opt = [](const std::string& v) { return v.empty() ? nullptr : &v; };
        copy << store::CopyRow{{&at, &s.user, &s.database, &s.client, &s.application,
                                s.backend_pid ? &pid : nullptr, &protocol, opt(fingerprint),
                                r.text ? &*r.text : nullptr, &decision, opt(r.rule), opt(r.object),
                                &tables, &version, opt(rows), &duration, opt(r.sqlstate)}};
      }
      copy.complete();
    }
    tx.commit();
    return batch.size();
  } catch (const std::exception& e) {
    error_ = fmt::format("cannot write table {}: {}", table_, e.what());
    while (!error_.empty() && (error_.back() == '\n' || error_.back() == ' ')) error_.pop_back();
    conn_.reset();
    return 0;
  }
}

}  // namespace kanon::proxy
