#include "proxy/audit_trail.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "base/text.h"
#include "proxy/audit_sinks.h"
#include "proxy/log.h"

namespace kanon::proxy {

namespace {

// The writer wakes at least this often, and at once for a batch this large:
// sessions never pay for waking it one record at a time.
constexpr auto kWriterTick = std::chrono::milliseconds(20);
constexpr size_t kWakeBatch = 512;
constexpr auto kRetryEvery = std::chrono::seconds(1);

// What a held record takes, about: its text and strings, not the session
// (shared by the session's records).
size_t footprint(const AuditRecord& r) {
  size_t n = sizeof(AuditRecord) + (r.text ? r.text->size() : 0) + r.rule.size() + r.object.size() +
             r.sqlstate.size();
  for (const auto& t : r.tables) n += sizeof(t) + t.size();
  return n;
}

}  // namespace

AuditTrail::AuditTrail(const settings::AuditConfig& config, const std::string& service_conninfo)
    : keep_text_(config.text == settings::AuditText::kFull),
      deny_on_failure_(config.on_failure == settings::AuditOnFailure::kDeny),
      audit_exempt_(config.exempt),
      capacity_(config.queue_size) {
  if (!config.file.empty()) sinks_.push_back(std::make_unique<AuditFileSink>(config.file));
  if (!config.table.empty())
    sinks_.push_back(std::make_unique<AuditTableSink>(service_conninfo, config.table));
  sink_up_ = std::make_unique<std::atomic<bool>[]>(sinks_.size());
  held_.resize(sinks_.size());
  for (size_t i = 0; i < sinks_.size(); ++i) {
    const bool up = sinks_[i]->open();
    sink_up_[i] = up;
    if (up)
      log(LogLevel::kInfo, "audit: writing to {}", sinks_[i]->name());
    else
      log(LogLevel::kError, "audit: {} is down: {}", sinks_[i]->name(), sinks_[i]->error());
  }
  queue_.reserve(kWakeBatch);
  writer_ = std::thread([this] { run(); });
}

AuditTrail::~AuditTrail() {
  {
    const std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

bool AuditTrail::available() const {
  if (queued_.load(std::memory_order_relaxed) >= capacity_) return false;
  for (size_t i = 0; i < sinks_.size(); ++i)
    if (!sink_up_[i].load(std::memory_order_relaxed)) return false;
  return true;
}

std::string AuditTrail::unavailable_reason() const {
  for (size_t i = 0; i < sinks_.size(); ++i)
    if (!sink_up_[i].load()) return sinks_[i]->name();
  return "queue full";
}

void AuditTrail::submit(AuditRecord record) {
  records_.fetch_add(1, std::memory_order_relaxed);
  size_t n = 0;
  {
    const std::lock_guard lock(mu_);
    if (queue_.size() >= capacity_) {
      lost_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queue_.push_back(std::move(record));
    ++submitted_;
    n = queue_.size();
    queued_.store(n, std::memory_order_relaxed);
  }
  if (n == kWakeBatch || n == capacity_) wake_.notify_one();
}

void AuditTrail::reopen() {
  reopen_ = true;
  wake_.notify_one();
}

void AuditTrail::flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = submitted_;
  flush_ = true;
  wake_.notify_one();
  drained_.wait(lock, [&] { return handled_ >= target; });
}

void AuditTrail::run() {
  std::vector<AuditRecord> batch;
  auto last_retry = std::chrono::steady_clock::now();
  for (;;) {
    bool stop = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, kWriterTick, [&] {
        return stopping_ || flush_ || reopen_.load() || queue_.size() >= kWakeBatch;
      });
      flush_ = false;
      batch.swap(queue_);
      queued_.store(0, std::memory_order_relaxed);
      stop = stopping_;
    }
    if (reopen_.exchange(false))
      for (size_t i = 0; i < sinks_.size(); ++i)
        if (auto* file = dynamic_cast<AuditFileSink*>(sinks_[i].get())) {
          const bool was_up = sink_up_[i].load();
          sink_up_[i] = file->open() && recover(i);
          if (sink_up_[i])
            log(LogLevel::kInfo, "audit: reopened {}", file->name());
          else if (was_up)
            log(LogLevel::kError, "audit: {} is down: {}", file->name(), file->error());
        }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_retry >= kRetryEvery) {
      last_retry = now;
      for (size_t i = 0; i < sinks_.size(); ++i)
        if (!sink_up_[i].load() && recover(i)) {
          sink_up_[i] = true;
          log(LogLevel::kInfo, "audit: {} is up again", sinks_[i]->name());
        }
    }
    if (!batch.empty()) write_batch(batch);
    {
      const std::lock_guard lock(mu_);
      handled_ += batch.size();
    }
    drained_.notify_all();
    batch.clear();
    if (stop) {
      const std::lock_guard lock(mu_);
      if (queue_.empty()) break;
    }
  }
  for (size_t i = 0; i < sinks_.size(); ++i)
    if (!held_[i].records.empty() && !recover(i)) {
      lost_.fetch_add(held_[i].records.size(), std::memory_order_relaxed);
      log(LogLevel::kWarning, "audit: {} records held for {} lost at shutdown",
          held_[i].records.size(), sinks_[i]->name());
    }
}

bool AuditTrail::recover(size_t i) {
  auto& sink = *sinks_[i];
  if (!sink.is_open() && !sink.open()) return false;
  auto& held = held_[i];
  if (held.records.empty()) return true;
  const size_t written = sink.write(held.records);
  const auto end = held.records.begin() + static_cast<std::ptrdiff_t>(written);
  for (auto it = held.records.begin(); it != end; ++it) held.bytes -= footprint(*it);
  held.records.erase(held.records.begin(), end);
  if (held.records.empty()) {
    log(LogLevel::kInfo, "audit: {} held records written to {}", written, sink.name());
    return true;
  }
  return false;
}

void AuditTrail::hold(size_t i, std::vector<AuditRecord>::const_iterator from,
                      std::vector<AuditRecord>::const_iterator to) {
  auto& held = held_[i];
  size_t lost = 0;
  for (auto it = from; it != to; ++it) {
    const size_t bytes = footprint(*it);
    if (held.records.size() >= capacity_ || held.bytes + bytes > kHeldBytes) {
      ++lost;
      continue;
    }
    held.records.push_back(*it);
    held.bytes += bytes;
  }
  if (lost > 0) {
    lost_.fetch_add(lost, std::memory_order_relaxed);
    log(LogLevel::kWarning, "audit: {} records lost: {} holds {} already ({} bytes)", lost,
        sinks_[i]->name(), held.records.size(), held.bytes);
  }
}

void AuditTrail::write_batch(std::vector<AuditRecord>& batch) {
  for (size_t i = 0; i < sinks_.size(); ++i) {
    auto& sink = *sinks_[i];
    // A sink that is down takes nothing until it wrote what it holds.
    const size_t written = sink_up_[i].load() ? sink.write(batch) : 0;
    if (written == batch.size()) continue;
    if (sink_up_[i].exchange(false))
      log(LogLevel::kError, "audit: {} is down: {}", sink.name(), sink.error());
    hold(i, batch.begin() + static_cast<std::ptrdiff_t>(written), batch.end());
  }
  // The ring keeps kRingSize records: only a batch's last ones can stay,
  // each with at most kRingTextBytes of its text (a statement may be 64 MB).
  const size_t keep = std::min(batch.size(), kRingSize);
  // The sinks have them: the batch's texts are cut in place.
  for (size_t i = batch.size() - keep; i < batch.size(); ++i) {
    auto& text = batch[i].text;
    if (text && text->size() > kRingTextBytes) {
      const size_t size = text->size();
      text->resize(base::utf8_prefix(*text, kRingTextBytes).size());
      text->shrink_to_fit();
      *text += fmt::format("... ({} bytes)", size);
    }
    ring_.push(batch[i]);
  }
}

std::string AuditTrail::prometheus() const {
  std::string out = fmt::format(
      "# HELP kanon_audit_records_total Audit records of restricted statements produced.\n"
      "# TYPE kanon_audit_records_total counter\nkanon_audit_records_total {}\n"
      "# HELP kanon_audit_lost_total Audit records a sink did not get (queue full, sink down).\n"
      "# TYPE kanon_audit_lost_total counter\nkanon_audit_lost_total {}\n"
      "# HELP kanon_audit_sink_up Whether the audit sink takes records (1) or not (0).\n"
      "# TYPE kanon_audit_sink_up gauge\n",
      records_.load(), lost_.load());
  for (size_t i = 0; i < sinks_.size(); ++i)
    out += fmt::format("kanon_audit_sink_up{{sink=\"{}\"}} {}\n", sinks_[i]->label(),
                       sink_up_[i].load() ? 1 : 0);
  return out;
}

}  // namespace kanon::proxy
