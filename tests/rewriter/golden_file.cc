#include "tests/rewriter/golden_file.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace kanon::testing {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

void strip_trailing_newlines(std::string& s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
}

void load_file(const std::string& path, std::vector<GoldenCase>& out) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::string file = std::filesystem::path(path).filename().string();
  enum class State { kOutside, kInput, kOutput } state = State::kOutside;
  GoldenCase cur;
  std::string line;
  int n = 0;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(file + ":" + std::to_string(n) + ": " + what);
  };
  auto finish = [&] {
    if (state == State::kOutside) return;
    if (cur.expect.empty()) fail("case '" + cur.name + "' has no '--- expect:' line");
    strip_trailing_newlines(cur.input);
    strip_trailing_newlines(cur.output);
    if (cur.expect == "rewritten" && cur.output.empty())
      fail("case '" + cur.name + "' expects a rewrite but gives no text");
    out.push_back(cur);
    state = State::kOutside;
  };
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("=== ", 0) == 0) {
      finish();
      cur = GoldenCase{};
      cur.file = file;
      cur.line = n;
      cur.name = trim(line.substr(4));
      state = State::kInput;
      continue;
    }
    if (state == State::kOutside) {
      if (!trim(line).empty() && line[0] != '#') fail("text outside a case: " + line);
      continue;
    }
    if (line.rfind("--- ", 0) == 0) {
      const std::string directive = line.substr(4);
      const size_t colon = directive.find(':');
      if (colon == std::string::npos) fail("directive without ':': " + line);
      const std::string key = trim(directive.substr(0, colon));
      const std::string value = trim(directive.substr(colon + 1));
      if (key == "env") {
        cur.env = value;
      } else if (key == "search_path") {
        cur.search_path = value;
      } else if (key == "exec") {
        if (value != "no" && value != "yes") fail("exec: must be yes or no");
        cur.exec = value == "yes";
      } else if (key == "expect") {
        if (state != State::kInput || cur.input.empty()) fail("'--- expect:' before any input");
        const size_t sp = value.find(' ');
        cur.expect = value.substr(0, sp);
        if (cur.expect == "denied") {
          const std::string rest = sp == std::string::npos ? "" : trim(value.substr(sp + 1));
          const size_t sp2 = rest.find(' ');
          cur.rule = rest.substr(0, sp2);
          cur.object = sp2 == std::string::npos ? "" : trim(rest.substr(sp2 + 1));
          if (cur.rule.empty()) fail("denied needs a rule");
        } else if (cur.expect != "pass" && cur.expect != "rewritten" && cur.expect != "syntax") {
          fail("expect must be pass, rewritten, denied or syntax: " + value);
        }
        state = State::kOutput;
      } else {
        fail("unknown directive '" + key + "'");
      }
      continue;
    }
    if (state == State::kInput) {
      cur.input += line + "\n";
    } else {
      if (cur.expect != "rewritten" && !trim(line).empty())
        fail("only rewritten cases have expected text: " + line);
      cur.output += line + "\n";
    }
  }
  finish();
}

}  // namespace

std::string golden_dir() {
  const char* dir = std::getenv("KANON_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/tests/rewriter/golden";
}

std::vector<GoldenCase> load_golden_cases(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".sqltest") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<GoldenCase> out;
  for (const auto& f : files) load_file(f, out);
  return out;
}

}  // namespace kanon::testing
