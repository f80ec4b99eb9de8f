// AuditTrail: the records of restricted statements on their way to the
// sinks (audit_sinks.h). Sessions submit() on their I/O thread without
// blocking: a record goes into a bounded queue, which one writer thread
// drains in batches into every sink (and into the ring SHOW AUDIT reads).
//
// Failure: a sink whose write fails is down, and the records it did not take
// are held for it (at most queue_size of them and kHeldBytes of their
// text: statements denied while it is down are held too, and one may be
// 64 MB); the writer retries opening
// it every second and writes what it holds before the sink counts as up
// again. While a sink is down or the queue is full, available() is false;
// with on_failure: deny the session then denies restricted statements (rule
// audit-unavailable). A record is lost (and counted) only when the queue or
// a sink's held records are full, or when kanon stops with records held.
//
// Thread-safety: every public member may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proxy/audit_record.h"
#include "proxy/audit_ring.h"
#include "settings/server_config.h"

namespace kanon::proxy {

class AuditSink;  // audit_sinks.h

class AuditTrail {
 public:
  static constexpr size_t kRingSize = 100;
  static constexpr size_t kRingTextBytes = 4096;
  static constexpr size_t kHeldBytes = size_t{64} << 20;  // per sink

  // REQUIRES: config.enabled(). `service_conninfo` is the table sink's
  // connection. Opens the sinks once (a sink that cannot be opened starts
  // down) and starts the writer thread.
  AuditTrail(const settings::AuditConfig& config, const std::string& service_conninfo);
  // Writes what is queued, then stops the writer.
  ~AuditTrail();
  AuditTrail(const AuditTrail&) = delete;
  AuditTrail& operator=(const AuditTrail&) = delete;

  bool keep_text() const { return keep_text_; }
  bool deny_on_failure() const { return deny_on_failure_; }
  // audit.exempt: sessions relayed untouched are recorded too.
  bool audit_exempt() const { return audit_exempt_; }
  // True while every sink is up and the queue has room.
  bool available() const;
  // What is unavailable, for the denial's object: "file /x", "queue".
  std::string unavailable_reason() const;

  // Never blocks; a full queue loses the record (counted).
  void submit(AuditRecord record);
  // SIGHUP: the file sink is reopened before the next batch is written.
  void reopen();
  // Blocks until everything submitted so far was handed to the sinks.
  void flush();

  std::vector<AuditRecord> latest() const { return ring_.latest(); }
  uint64_t records() const { return records_.load(); }
  uint64_t lost() const { return lost_.load(); }
  // Prometheus lines: kanon_audit_records_total, kanon_audit_lost_total,
  // kanon_audit_sink_up{sink=...}.
  std::string prometheus() const;

 private:
  void run();
  void write_batch(std::vector<AuditRecord>& batch);
  // Keeps records sink i did not take, up to capacity_ and kHeldBytes (the
  // rest are lost).
  void hold(size_t i, std::vector<AuditRecord>::const_iterator from,
            std::vector<AuditRecord>::const_iterator to);
  // Opens sink i if it is closed and writes what it holds; true when it is up.
  bool recover(size_t i);

  const bool keep_text_;
  const bool deny_on_failure_;
  const bool audit_exempt_;
  const size_t capacity_;
  std::vector<std::unique_ptr<AuditSink>> sinks_;  // the writer thread's
  std::unique_ptr<std::atomic<bool>[]> sink_up_;   // per sink, read anywhere
  struct Held {
    std::vector<AuditRecord> records;
    size_t bytes = 0;  // their footprint()s
  };
  std::vector<Held> held_;  // per sink, the writer thread's
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::vector<AuditRecord> queue_;
  std::atomic<size_t> queued_{0};
  uint64_t submitted_ = 0;  // under mu_
  uint64_t handled_ = 0;    // under mu_: submitted records the writer is done with
  bool stopping_ = false;
  bool flush_ = false;
  std::atomic<bool> reopen_{false};
  std::atomic<uint64_t> records_{0};
  std::atomic<uint64_t> lost_{0};
  AuditRing ring_{kRingSize};
  std::thread writer_;
};

}  // namespace kanon::proxy
