// The audit trail's queue, writer thread and file sink, without sockets:
// records reach the file in order; a rename + reopen() splits them between
// the two files without loss; every record is either written or counted
// lost, also when a tiny queue overflows; a sink that cannot be opened makes
// the trail unavailable, naming it, and holds what it gets until it opens; a
// sink whose write fails after it opened holds the batch too.
#include "proxy/audit_trail.h"

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/scratch_dir.h"

using namespace kanon::proxy;
using kanon::settings::AuditConfig;

namespace {

const std::string kDir = kanon::testing::scratch_path("audit-trail");

std::vector<uint64_t> versions_in(const std::string& path) {
  std::vector<uint64_t> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line)["snapshot_version"]);
  return out;
}

AuditRecord record(uint64_t i) {
  AuditRecord r;
  r.session = std::make_shared<AuditSession>(AuditSession{"analyst", "db", "c", "app", 1});
  r.snapshot_version = i;
  r.text = "SELECT " + std::to_string(i);
  return r;
}

struct Dir {
  Dir() {
    std::filesystem::remove_all(kDir);
    std::filesystem::create_directories(kDir);
  }
  ~Dir() { std::filesystem::remove_all(kDir); }
};

}  // namespace

TEST_CASE("records reach the file in order; reopen after a rename loses and repeats nothing") {
  Dir dir;
  AuditConfig config;
  config.file = kDir + "/audit.jsonl";
  AuditTrail trail(config, "");
  CHECK(trail.available());
  for (uint64_t i = 0; i < 1000; ++i) trail.submit(record(i));
  trail.flush();
  CHECK(versions_in(config.file).size() == 1000);
  for (uint64_t i = 1000; i < 2000; ++i) {
    if (i == 1500) {
      std::filesystem::rename(config.file, config.file + ".1");
      trail.reopen();
    }
    trail.submit(record(i));
  }
  trail.flush();
  auto all = versions_in(config.file + ".1");
  const auto later = versions_in(config.file);
  CHECK(later.size() >= 1);  // the reopen happened before the last batch at the latest
  all.insert(all.end(), later.begin(), later.end());
  REQUIRE(all.size() == 2000);
  for (uint64_t i = 0; i < 2000; ++i) CHECK(all[i] == i);
  CHECK(trail.records() == 2000);
  CHECK(trail.lost() == 0);
  const auto ring = trail.latest();
  REQUIRE(ring.size() == AuditTrail::kRingSize);
  CHECK(ring.back().snapshot_version == 1999);
  CHECK(ring.front().snapshot_version == 2000 - AuditTrail::kRingSize);
  CHECK(trail.prometheus().find("kanon_audit_sink_up{sink=\"file\"} 1\n") != std::string::npos);
}

TEST_CASE("a full queue loses records, and each is either written or counted lost") {
  Dir dir;
  AuditConfig config;
  config.file = kDir + "/audit.jsonl";
  config.queue_size = 1;
  AuditTrail trail(config, "");
  for (uint64_t i = 0; i < 5000; ++i) trail.submit(record(i));
  trail.flush();
  const auto written = versions_in(config.file);
  CHECK(trail.records() == 5000);
  CHECK(written.size() + trail.lost() == 5000);
  MESSAGE("queue of 1: " << trail.lost() << " of 5000 records lost");
  for (size_t i = 1; i < written.size(); ++i) CHECK(written[i - 1] < written[i]);
  CHECK(trail.prometheus().find("kanon_audit_lost_total " + std::to_string(trail.lost())) !=
        std::string::npos);
}

TEST_CASE("a sink that cannot be opened: unavailable, named, and its records held until it opens") {
  Dir dir;
  AuditConfig config;
  config.file = kDir + "/no/such/dir/audit.jsonl";
  AuditTrail trail(config, "");
  CHECK_FALSE(trail.available());
  CHECK(trail.unavailable_reason() == "file " + config.file);
  CHECK(trail.deny_on_failure());
  for (uint64_t i = 0; i < 10; ++i) trail.submit(record(i));
  trail.flush();
  CHECK(trail.lost() == 0);
  CHECK(trail.prometheus().find("kanon_audit_sink_up{sink=\"file\"} 0\n") != std::string::npos);
  // The directory appears: the writer opens the file within a second and
  // writes what it held before anything newer.
  std::filesystem::create_directories(kDir + "/no/such/dir");
  for (int i = 0; i < 400 && !trail.available(); ++i) usleep(50 * 1000);
  REQUIRE(trail.available());
  trail.submit(record(10));
  trail.flush();
  const auto written = versions_in(config.file);
  REQUIRE(written.size() == 11);
  for (uint64_t i = 0; i < 11; ++i) CHECK(written[i] == i);
  CHECK(trail.lost() == 0);
}

// A write that fails where the open succeeded (a trigger rejecting rows, a
// full disk) lost the batch: the records of statements already served,
// also with on_failure: deny (found by an adversarial probe). The file is a
// link to /dev/full (opens, every write fails) and then a regular file.
TEST_CASE("a write that fails after the open holds the batch; beyond queue_size records are lost") {
  Dir dir;
  AuditConfig config;
  config.file = kDir + "/audit.jsonl";
  config.queue_size = 8;
  std::filesystem::create_symlink("/dev/full", config.file);
  AuditTrail trail(config, "");
  CHECK(trail.available());  // opening /dev/full succeeds
  for (uint64_t i = 0; i < 5; ++i) trail.submit(record(i));
  trail.flush();
  CHECK_FALSE(trail.available());
  CHECK(trail.lost() == 0);
  for (uint64_t i = 5; i < 12; ++i) trail.submit(record(i));
  trail.flush();
  CHECK(trail.lost() == 4);  // 8 held: 0-7
  std::filesystem::remove(config.file);
  std::ofstream(config.file).close();
  for (int i = 0; i < 400 && !trail.available(); ++i) usleep(50 * 1000);
  REQUIRE(trail.available());
  const auto written = versions_in(config.file);
  REQUIRE(written.size() == 8);
  for (uint64_t i = 0; i < 8; ++i) CHECK(written[i] == i);
  CHECK(trail.prometheus().find("kanon_audit_lost_total 4\n") != std::string::npos);
}

// Statements denied while a sink is down are recorded (and held) too; one
// may be 64 MB, so what is held is bounded in bytes as well as in records.
TEST_CASE("held records are bounded in bytes: 64 MiB per sink, the rest lost") {
  Dir dir;
  AuditConfig config;
  config.file = kDir + "/later/audit.jsonl";
  AuditTrail trail(config, "");
  REQUIRE_FALSE(trail.available());
  const std::string mib(size_t{1} << 20, 'x');
  for (uint64_t i = 0; i < 100; ++i) {
    auto r = record(i);
    r.text = mib;
    trail.submit(std::move(r));
  }
  trail.flush();
  CHECK(trail.lost() == 37);  // 63 records of 1 MiB and their fields fit in 64 MiB
  std::filesystem::create_directories(kDir + "/later");
  for (int i = 0; i < 400 && !trail.available(); ++i) usleep(50 * 1000);
  REQUIRE(trail.available());
  const auto written = versions_in(config.file);
  REQUIRE(written.size() == 63);
  for (uint64_t i = 0; i < 63; ++i) CHECK(written[i] == i);
}

// A file write cut short inside a line (here by RLIMIT_FSIZE, as a full disk
// would): the line is ended when the sink opens again, and the records from
// the cut one on are written again, each whole on a line of its own.
TEST_CASE("a write cut inside a line: the line is ended, its record written again whole") {
  Dir dir;
  AuditConfig config;
  config.file = kDir + "/audit.jsonl";
  AuditTrail trail(config, "");
  trail.submit(record(0));
  trail.flush();
  const auto first_line = std::filesystem::file_size(config.file);
  ::signal(SIGXFSZ, SIG_IGN);
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
  rlimit cut = before;
  cut.rlim_cur = first_line + first_line / 2;  // half way into the second line
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &cut) == 0);
  for (uint64_t i = 1; i < 5; ++i) trail.submit(record(i));
  trail.flush();
  const bool down = !trail.available();
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &before) == 0);
  REQUIRE(down);
  CHECK(std::filesystem::file_size(config.file) == cut.rlim_cur);
  for (int i = 0; i < 400 && !trail.available(); ++i) usleep(50 * 1000);
  REQUIRE(trail.available());
  std::ifstream in(config.file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 6);
  std::vector<uint64_t> whole;
  for (const auto& line : lines) {
    const auto doc = nlohmann::json::parse(line, nullptr, false);
    if (!doc.is_discarded()) whole.push_back(doc["snapshot_version"]);
  }
  CHECK(whole == std::vector<uint64_t>{0, 1, 2, 3, 4});
  CHECK(nlohmann::json::parse(lines[1], nullptr, false).is_discarded());  // the cut line
  CHECK(trail.lost() == 0);
}

// SHOW AUDIT's ring keeps a statement's first kRingTextBytes (at a UTF-8
// character's start) and its size; the file keeps the whole text. Without
// the cut, 100 statements of 64 MB held 6.4 GB (found by an adversarial
// probe: ten 20 MB statements took kanon from 80 to 427 MB).
TEST_CASE("the ring keeps a long statement's beginning and its size, the sink all of it") {
  Dir dir;
  AuditConfig config;
  config.file = kDir + "/audit.jsonl";
  AuditTrail trail(config, "");
  AuditRecord r = record(1);
  std::string text = "SELECT '";
  text.append(AuditTrail::kRingTextBytes - 9, 'x');
  text.append("\xC3\xBC");
  text.append(100000, 'y');
  text.push_back('\'');
  r.text = text;
  const size_t size = r.text->size();
  trail.submit(r);
  trail.flush();
  const auto ring = trail.latest();
  REQUIRE(ring.size() == 1);
  REQUIRE(ring[0].text);
  const std::string& kept = *ring[0].text;
  CHECK(kept.size() < AuditTrail::kRingTextBytes + 32);
  // The two-byte character straddles the cut: it is left out whole.
  std::string start = "SELECT '";
  start.append(AuditTrail::kRingTextBytes - 9, 'x');
  start.append("...");
  CHECK(kept.starts_with(start));
  CHECK(kept.ends_with("(" + std::to_string(size) + " bytes)"));
  std::ifstream in(config.file);
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(nlohmann::json::parse(line)["text"].get<std::string>() == *r.text);
}
