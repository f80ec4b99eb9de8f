// Golden cases for the rewriter, read from tests/rewriter/golden/*.sqltest:
//
//   === name of the case
//   --- env: default              (optional: default, materialized, unbuilt, two-schemas)
//   --- search_path: public       (optional)
//   --- exec: no                  (optional: the execution test skips it)
//   SELECT ... (input, one or more lines)
//   --- expect: pass | rewritten | denied <rule> <object> | syntax
//   SELECT ... (only for rewritten: the expected text)
//
// In expected text @MASKS(schema.table) stands for that table's mask select
// list and @COPY(schema.table) for a read of its materialized copy in the
// environment (a derived table guarded against older snapshots).
// Lines starting with # outside a case are comments.
#pragma once

#include <string>
#include <vector>

namespace kanon::testing {

struct GoldenCase {
  std::string file;
  int line = 0;
  std::string name;
  std::string env = "default";
  std::string search_path = "\"$user\", public";
  bool exec = true;
  std::string input;
  std::string expect;  // pass, rewritten, denied, syntax
  std::string rule;    // denied
  std::string object;  // denied
  std::string output;  // rewritten
};

// tests/rewriter/golden under KANON_SOURCE_DIR (set by ctest).
std::string golden_dir();

// Every case of every *.sqltest file in `dir`, files in name order. Throws
// std::runtime_error naming file and line on a malformed file.
std::vector<GoldenCase> load_golden_cases(const std::string& dir);

// The fence's WITH (docs/rewriter.md, "the fence"), written @FENCE.
inline const std::string kFence = "WITH \"kanon fence\" AS (SELECT)";

// Replaces @MASKS(x) and @COPY(x) using `lookup(kind, x)`, and @FENCE.
template <typename Lookup>
std::string expand_macros(const std::string& text, Lookup lookup) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 6, "@FENCE") == 0) {
      out += kFence;
      i += 6;
      continue;
    }
    const bool masks = text.compare(i, 7, "@MASKS(") == 0;
    const bool copy = text.compare(i, 6, "@COPY(") == 0;
    if (!masks && !copy) {
      out += text[i++];
      continue;
    }
    const size_t open = text.find('(', i);
    const size_t close = text.find(')', open);
    out += lookup(masks ? "MASKS" : "COPY", text.substr(open + 1, close - open - 1));
    i = close + 1;
  }
  return out;
}

}  // namespace kanon::testing
