// `kanon anonymize` end to end on ADULT: the flags give ARX's reference
// optimum (all nine attributes quasi-identifying), a job file runs
// best-first search, every published CSV really is k-anonymous within the
// suppression limit, and a broken hierarchy is refused naming the value.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/demo_data.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::testing;

namespace {

const char* const kAttributes[] = {"age",        "education", "marital-status", "native-country",
                                   "occupation", "race",      "salary-class",   "sex",
                                   "workclass"};
const char* const kQuasi[] = {
    "sex",       "age",       "race", "marital-status", "education", "native-country",
    "workclass", "occupation"};

using kanon::testing::adult_dir;

std::string temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() / "kanon-anonymize-test";
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::vector<std::string> split(const std::string& line, char delimiter) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, delimiter)) out.push_back(cell);
  return out;
}

// Checks the published table: every class of non-suppressed rows (over the
// quasi-identifiers of this test) has at least k rows; returns the number of
// suppressed rows (all quasi-identifiers '*').
size_t check_k_anonymous(const std::string& csv_path, size_t k, size_t expected_rows,
                         const std::string& insensitive) {
  std::ifstream in(csv_path);
  std::string line;
  REQUIRE(std::getline(in, line));
  const auto header = split(line, ';');
  std::vector<size_t> qi_columns;
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] != insensitive) qi_columns.push_back(i);
  std::map<std::string, size_t> classes;
  size_t rows = 0, suppressed = 0;
  while (std::getline(in, line)) {
    ++rows;
    const auto cells = split(line, ';');
    REQUIRE(cells.size() == header.size());
    std::string key;
    bool all_star = true;
    for (size_t c : qi_columns) {
      key += cells[c] + '\x1f';
      all_star = all_star && cells[c] == "*";
    }
    if (all_star) {
      ++suppressed;
    } else {
      ++classes[key];
    }
  }
  CHECK(rows == expected_rows);
  size_t smallest = SIZE_MAX;
  for (const auto& [key, n] : classes) smallest = std::min(smallest, n);
  CHECK(smallest >= k);
  return suppressed;
}

std::vector<std::string> hierarchy_flags() {
  std::vector<std::string> flags;
  for (const char* a : kAttributes)
    flags.push_back(std::string("--hierarchy=") + a + "=" + adult_dir() + "/adult_hierarchy_" + a +
                    ".csv");
  return flags;
}

}  // namespace

TEST_CASE("anonymize with flags: Loss, k=5, 5% suppression gives ARX's optimum") {
  const std::string out = temp_dir() + "/flags.csv", report = temp_dir() + "/flags.json";
  std::vector<std::string> argv = {kanon_executable(),         "anonymize",   "--input",
                                   adult_dir() + "/adult.csv", "--delimiter", ";"};
  for (const auto& f : hierarchy_flags()) argv.push_back(f);
  for (const std::string& f :
       std::vector<std::string>{"--k", "5", "--suppression", "0.05", "--metric", "loss", "--output",
                                out, "--report", report})
    argv.push_back(f);
  const auto r = run_command(argv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string json = read_file(report);
  CHECK(json.find("\"suppressed\": 1346") != std::string::npos);
  CHECK(json.find("\"loss\": 0.24193") != std::string::npos);
  CHECK(json.find("\"lattice_size\": 12960") != std::string::npos);
  CHECK(json.find("\"algorithm\": \"flash\"") != std::string::npos);
  CHECK(json.find("\"age\": 3") != std::string::npos);
  CHECK(json.find("\"education\": 2") != std::string::npos);
  CHECK(check_k_anonymous(out, 5, 30162, "") == 1346);
}

TEST_CASE("anonymize with a job file: DM*, k=5, no suppression, best-first search") {
  const std::string dir = temp_dir();
  std::ofstream job(dir + "/job.yaml");
  job << "input: " << adult_dir() << "/adult.csv\ndelimiter: \";\"\nattributes:\n";
  for (const char* a : kQuasi)
    job << "  " << a << ": {role: quasi, hierarchy: " << adult_dir() << "/adult_hierarchy_" << a
        << ".csv}\n";
  job << "k: 5\nsuppression: 0\nmetric: dm\nalgorithm: bfs\noutput: job.csv\nreport: job.json\n";
  job.close();
  const auto r = run_command({kanon_executable(), "anonymize", "-q", "--job", dir + "/job.yaml"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string json = read_file(dir + "/job.json");
  CHECK(json.find("\"suppressed\": 0") != std::string::npos);
  CHECK(json.find("\"algorithm\": \"bfs\"") != std::string::npos);
  CHECK(check_k_anonymous(dir + "/job.csv", 5, 30162, "salary-class") == 0);
}

TEST_CASE("a hierarchy that misses a data value is refused with file and value") {
  const std::string dir = temp_dir();
  const std::string broken = dir + "/sex.csv";
  std::ofstream(broken) << "Male;*\n";  // no line for Female
  const auto r =
      run_command({kanon_executable(), "anonymize", "-q", "--input", adult_dir() + "/adult.csv",
                   "--delimiter", ";", "--hierarchy", "sex=" + broken, "--k", "2", "--suppression",
                   "0", "--metric", "dm", "--output", dir + "/x.csv", "--report", dir + "/x.json"});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.err.find("Female") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("sex") != std::string::npos, r.err);
  CHECK_FALSE(std::filesystem::exists(dir + "/x.csv"));
}
