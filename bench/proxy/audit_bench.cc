// The audit trail's own cost per statement, without network or database
// (benchmark, not a test): a session's AuditTracker fed the frames of a
// pgbench -S transaction (simple: Query; extended: Parse, Bind, Describe,
// Execute, Sync and their answers) in one thread, records going through the
// AuditTrail's queue and writer thread into a file sink (/dev/null by
// default). Prints the session thread's CPU time per statement with the
// audit trail and with the same frame decoding but no tracker (the
// reference), and the whole process's CPU time per statement (the writer
// thread's JSON and write included).
//
//   build/bench/proxy/audit_bench [--statements N] [--file PATH]
#include <fmt/format.h>
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstring>
#include <string>

#include "proxy/audit_tracker.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/frontend_messages.h"

using namespace kanon;
using namespace kanon::proxy;

namespace {

struct Frames {
  std::vector<wire::Buffer> client;
  std::vector<wire::Buffer> backend;
};

wire::Frame frame_of(const wire::Buffer& b) {
  return wire::frame_typed(wire::Bytes(b), 1u << 30);
}

Frames transaction(bool extended) {
  const std::string sql = "SELECT abalance FROM pgbench_accounts WHERE aid = $1;";
  Frames f;
  const auto client = [&](const auto& m) {
    f.client.emplace_back();
    wire::encode(m, f.client.back());
  };
  const auto backend = [&](const auto& m) {
    f.backend.emplace_back();
    wire::encode(m, f.backend.back());
  };
  wire::RowDescription rd;
  rd.fields.push_back({});
  rd.fields.back().name = "abalance";
  wire::DataRow row;
  row.columns.emplace_back(std::vector<uint8_t>{'0'});
  if (extended) {
    client(wire::Parse{"", sql, {}});
    wire::Bind bind;
    bind.params.emplace_back(std::vector<uint8_t>{'4', '2'});
    client(bind);
    client(wire::Describe{'P', ""});
    client(wire::Execute{});
    client(wire::Sync{});
    backend(wire::ParseComplete{});
    backend(wire::BindComplete{});
  } else {
    client(wire::Query{"SELECT abalance FROM pgbench_accounts WHERE aid = 42;"});
  }
  backend(rd);
  backend(row);
  backend(wire::CommandComplete{"SELECT 1"});
  backend(wire::ReadyForQuery{'I'});
  return f;
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Session-thread CPU seconds (not wall time: the machine may be busy) for `n` transactions;
// `tracker` null: decoding only.
double run(const Frames& f, AuditTracker* tracker, int n) {
  rewriter::RewriteResult decided;
  decided.fingerprint = 0x1234567890abcdefULL;
  uint64_t sink = 0;
  const double t0 = thread_cpu_seconds();
  for (int i = 0; i < n; ++i) {
    for (const auto& b : f.client) {
      const auto frame = frame_of(b);
      sink += frame.size;
      if (!tracker) continue;
      tracker->received();
      if (frame.type == 'Q' || frame.type == 'P') tracker->decided(decided, 3);
      tracker->on_client_frame(frame, StatementGate::Action::kForward);
    }
    for (const auto& b : f.backend) {
      const auto frame = frame_of(b);
      sink += frame.size;
      if (tracker) tracker->on_backend_frame(frame.type, frame.body);
    }
  }
  const double s = thread_cpu_seconds() - t0;
  if (sink == 42) std::puts("");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 200000;
  std::string file = "/dev/null";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--statements")) n = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--file")) file = argv[i + 1];
  }
  settings::AuditConfig config;
  config.file = file;
  config.queue_size = 1u << 20;  // the benchmark measures cost, not back-pressure
  fmt::print("audit trail cost per statement ({} statements, file sink {})\n", n, file);
  fmt::print(
      "| protocol | session thread, no audit (us) | session thread, audit (us) | process CPU, "
      "audit (us) |\n");
  fmt::print("|---|---|---|---|\n");
  {  // warm-up: the allocator and the page cache, not measured
    AuditTrail trail(config, "");
    AuditTracker tracker(trail,
                         AuditSession{"analyst", "bench", "127.0.0.1:50000", "pgbench", 4242});
    run(transaction(false), &tracker, n);
    trail.flush();
  }
  for (bool extended : {false, true}) {
    const Frames f = transaction(extended);
    const double plain = run(f, nullptr, n);
    AuditTrail trail(config, "");
    AuditTracker tracker(trail,
                         AuditSession{"analyst", "bench", "127.0.0.1:50000", "pgbench", 4242});
    const double cpu0 = cpu_seconds();
    const double audited = run(f, &tracker, n);
    trail.flush();
    const double cpu = cpu_seconds() - cpu0;
    fmt::print("| {} | {:.3f} | {:.3f} | {:.3f} |\n", extended ? "extended" : "simple",
               plain / n * 1e6, audited / n * 1e6, cpu / n * 1e6);
    if (trail.lost() != 0) fmt::print("  ({} records lost)\n", trail.lost());
  }
  return 0;
}
