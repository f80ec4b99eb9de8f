// Where audit records go. Both sinks are used by the audit trail's writer
// thread only (not thread-safe); a failed write closes the sink until open()
// succeeds again, and the audit trail holds the records it did not take.
//
//   AuditFileSink   JSON lines appended to a file; reopen() after logrotate
//                   moved it (SIGHUP), so records before it stay in the old
//                   file and the rest go to the new one.
//   AuditTableSink  rows COPYed (libpqxx stream_to) into schema.table of the
//                   protected database over a service connection of its
//                   own; the table is created when missing.
#pragma once

#include <memory>
#include <pqxx/connection>
#include <string>
#include <vector>

#include "proxy/audit_record.h"

namespace kanon::proxy {

class AuditSink {
 public:
  virtual ~AuditSink() = default;
  // "file /var/log/kanon/audit.jsonl", "table kanon.audit": for metrics and messages.
  virtual std::string name() const = 0;
  virtual std::string label() const = 0;  // the `sink` label of kanon_audit_sink_up
  // Opens (or re-opens) the sink; false with error() set when it cannot.
  virtual bool open() = 0;
  virtual bool is_open() const = 0;
  // Writes the records in order; returns how many of the first ones it
  // wrote: batch.size() on success, fewer (and closed) on failure. The table
  // sink writes all or none; the file sink the lines a failed write()
  // finished (a line it cut short is ended before the next write, and its
  // record is written again whole).
  virtual size_t write(const std::vector<AuditRecord>& batch) = 0;
  const std::string& error() const { return error_; }

 protected:
  std::string error_;
};

class AuditFileSink : public AuditSink {
 public:
  explicit AuditFileSink(std::string path) : path_(std::move(path)) {}
  ~AuditFileSink() override;
  std::string name() const override { return "file " + path_; }
  std::string label() const override { return "file"; }
  bool open() override;
  bool is_open() const override { return fd_ >= 0; }
  size_t write(const std::vector<AuditRecord>& batch) override;
  void close();

 private:
  std::string path_;
  int fd_ = -1;
  bool torn_ = false;  // the file ends inside a line (a write cut short)
};

class AuditTableSink : public AuditSink {
 public:
  AuditTableSink(std::string conninfo, std::string table);
  ~AuditTableSink() override;
  std::string name() const override { return "table " + table_; }
  std::string label() const override { return "table"; }
  bool open() override;
  bool is_open() const override { return conn_ != nullptr; }
  size_t write(const std::vector<AuditRecord>& batch) override;

 private:
  std::string conninfo_;
  std::string table_;  // schema.table, plain identifiers (server config checks)
  std::unique_ptr<pqxx::connection> conn_;
};

}  // namespace kanon::proxy
