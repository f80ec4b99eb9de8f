// Brute-force checks of a Mondrian partitioning against the original text
// of the table (not the engine's encoding): each row in exactly one class,
// k and distinct l per class, generalized values that cover the class, and
// DP / NCP / GCP recomputed from the definitions.
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/csv.h"
#include "engine/hierarchy.h"
#include "engine/mondrian.h"
#include "engine/mondrian_output.h"

namespace kanon::engine::testing {

// What the test knows about one quasi-identifier, independent of the engine.
struct OracleAttribute {
  int column = -1;
  bool numeric = false;
  const HierarchyTable* hierarchy = nullptr;  // null: numeric or set
};

struct OracleLoss {
  double dp = 0, ncp_sum = 0, gcp = 0;
};

// Lowest level at which every value of `values` has the same ancestor; the
// ancestor's label and the hierarchy rows under it.
inline std::pair<std::string, size_t> oracle_common_node(const HierarchyTable& h,
                                                         const std::set<std::string>& values) {
  for (size_t level = 0; level < h.height(); ++level) {
    std::set<std::string> labels;
    for (const auto& row : h.rows) {
      if (values.count(row[0])) labels.insert(row[level]);
    }
    if (labels.size() == 1) {
      size_t leaves = 0;
      for (const auto& row : h.rows) leaves += row[level] == *labels.begin();
      return {*labels.begin(), leaves};
    }
  }
  return {"?", 0};
}

// Checks everything and returns the recomputed loss.
inline OracleLoss check_partitioning(const CsvTable& table, const std::vector<OracleAttribute>& qis,
                                     int sensitive_column, uint32_t k, uint32_t l,
                                     const MondrianInput& in, const MondrianResult& r) {
  const size_t n = table.rows.size();
  REQUIRE(r.order.size() == n);
  std::vector<int> seen(n, 0);
  for (uint32_t row : r.order) {
    REQUIRE(row < n);
    ++seen[row];
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(n));
  // Whole-column domains.
  std::vector<double> low(qis.size(), 1e300), high(qis.size(), -1e300);
  std::vector<std::set<std::string>> domain(qis.size());
  for (size_t a = 0; a < qis.size(); ++a) {
    for (const auto& row : table.rows) {
      const std::string& v = row[qis[a].column];
      if (qis[a].numeric) {
        low[a] = std::min(low[a], std::strtod(v.c_str(), nullptr));
        high[a] = std::max(high[a], std::strtod(v.c_str(), nullptr));
      }
      domain[a].insert(v);
    }
  }
  OracleLoss loss;
  uint32_t begin = 0;
  REQUIRE(r.classes() > 0);
  CHECK(r.class_end.back() == n);
  for (size_t c = 0; c < r.classes(); ++c) {
    const uint32_t end = r.class_end[c];
    REQUIRE(end > begin);
    const uint32_t size = end - begin;
    CHECK(size >= k);
    if (sensitive_column >= 0) {
      std::set<std::string> distinct;
      for (uint32_t i = begin; i < end; ++i)
        distinct.insert(table.rows[r.order[i]][sensitive_column]);
      CHECK(distinct.size() >= l);
    }
    double ncp = 0;
    for (size_t a = 0; a < qis.size(); ++a) {
      std::set<std::string> values;
      double lo = 1e300, hi = -1e300;
      for (uint32_t i = begin; i < end; ++i) {
        const std::string& v = table.rows[r.order[i]][qis[a].column];
        values.insert(v);
        if (qis[a].numeric) {
          lo = std::min(lo, std::strtod(v.c_str(), nullptr));
          hi = std::max(hi, std::strtod(v.c_str(), nullptr));
        }
      }
      const std::string shown = generalized_value(in, r, c, a);
      if (qis[a].numeric) {
        ncp += high[a] > low[a] ? (hi - lo) / (high[a] - low[a]) : 0;
        if (lo == hi) {
          CHECK(std::strtod(shown.c_str(), nullptr) == lo);
        } else {
          CHECK(shown == fmt::format("[{}-{}]", lo, hi));
        }
      } else if (qis[a].hierarchy) {
        const auto [label, leaves] = oracle_common_node(*qis[a].hierarchy, values);
        CHECK(shown == label);
        ncp += values.size() > 1 ? static_cast<double>(leaves) / qis[a].hierarchy->rows.size() : 0;
      } else {
        std::string set;
        for (const auto& v : values) set += (set.empty() ? "" : ",") + v;
        CHECK(shown == (values.size() == 1 ? set : "{" + set + "}"));
        ncp += values.size() > 1 ? static_cast<double>(values.size()) / domain[a].size() : 0;
      }
    }
    loss.dp += static_cast<double>(size) * size;
    loss.ncp_sum += size * ncp;
    begin = end;
  }
  loss.gcp = loss.ncp_sum / (static_cast<double>(qis.size()) * n);
  const MondrianLoss engine_loss = mondrian_loss(in, r);
  CHECK(engine_loss.dp == doctest::Approx(loss.dp).epsilon(1e-12));
  CHECK(engine_loss.ncp_sum == doctest::Approx(loss.ncp_sum).epsilon(1e-9));
  CHECK(engine_loss.gcp == doctest::Approx(loss.gcp).epsilon(1e-9));
  CHECK(engine_loss.classes == r.classes());
  return loss;
}

// Strictness: no final class has an allowable median cut on any attribute
// (left = codes <= median or codes < median, both sides >= k rows and >= l
// distinct sensitive values).
inline void check_no_allowable_cut(const MondrianInput& in, const MondrianResult& r, uint32_t k,
                                   uint32_t l) {
  for (size_t c = 0; c < r.classes(); ++c) {
    const uint32_t begin = r.class_begin(c), end = r.class_end[c];
    for (const auto& a : in.qis) {
      std::vector<int32_t> codes;
      for (uint32_t i = begin; i < end; ++i) codes.push_back(a.codes[r.order[i]]);
      std::sort(codes.begin(), codes.end());
      const int32_t median = codes[(codes.size() + 1) / 2 - 1];
      for (const int32_t split : {median, median + 1}) {
        std::set<int32_t> left_s, right_s;
        uint32_t left = 0;
        for (uint32_t i = begin; i < end; ++i) {
          const uint32_t row = r.order[i];
          const bool is_left = a.codes[row] < split;
          left += is_left;
          if (!in.sensitive.empty()) (is_left ? left_s : right_s).insert(in.sensitive[row]);
        }
        const uint32_t right = end - begin - left;
        bool allowable = left >= k && right >= k && left > 0 && right > 0;
        if (l > 1) allowable = allowable && left_s.size() >= l && right_s.size() >= l;
        CHECK_MESSAGE(!allowable, "class ", c, " of ", r.classes(), " could still be cut on ",
                      a.name);
      }
    }
  }
}

}  // namespace kanon::engine::testing
