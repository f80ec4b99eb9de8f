// An in-memory keyed table that changes between releases, for the
// history-aware refresh tests and benchmark: ADULT (or the seed's rows) with
// one key per row, inserts, deletes and updates, and each release's tuples
// kept as text so the naive counter never sees leaf ids.
#pragma once

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "policy/history_refresh.h"

namespace kanon::policy::testing {

using Values = std::vector<std::optional<std::string>>;

inline std::vector<Values> read_adult(const std::string& csv, size_t attributes) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  std::vector<Values> rows;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string field;
    Values v;
    while (v.size() < attributes && std::getline(ss, field, ';')) v.emplace_back(field);
    if (v.size() == attributes) rows.push_back(std::move(v));
  }
  return rows;
}

class KeyedTable {
 public:
  explicit KeyedTable(std::vector<std::string> names) : names_(std::move(names)) {}

  void insert(const std::string& key, Values v) { rows_[key] = std::move(v); }
  void erase(const std::string& key) { rows_.erase(key); }
  const std::map<std::string, Values>& rows() const { return rows_; }

  // The table now, with every key interned in `history` and its distinct row.
  EncodedTable encode(ReleaseHistory& history, std::vector<uint32_t>& key_rows) const {
    std::vector<EncodedColumn> cols;
    for (const auto& n : names_) cols.push_back({n, "text", {}});
    EncodedTable t(std::move(cols), std::nullopt);
    std::vector<std::pair<uint32_t, uint32_t>> placed;
    std::vector<std::optional<std::string_view>> view(names_.size());
    for (const auto& [key, v] : rows_) {
      for (size_t i = 0; i < v.size(); ++i)
        view[i] = v[i] ? std::optional<std::string_view>(*v[i]) : std::nullopt;
      placed.push_back({history.intern(key), t.add_row(view)});
    }
    key_rows.assign(history.key_count(), kNoRow);
    for (auto [k, r] : placed) key_rows[k] = r;
    return t;
  }

  // The released tuple of every current key under `tree`, as text (the true
  // tuple of its leaf, also for a held key).
  std::map<std::string, std::string> released(const DisclosureTree& tree) const {
    std::map<std::string, std::string> out;
    std::vector<std::optional<std::string_view>> view(names_.size());
    for (const auto& [key, v] : rows_) {
      for (size_t i = 0; i < v.size(); ++i)
        view[i] = v[i] ? std::optional<std::string_view>(*v[i]) : std::nullopt;
      std::string s;
      for (const auto& x : tree.release(view)) s += (x ? "=" + *x : std::string("*")) + "\x1f";
      out[key] = s;
    }
    return out;
  }

  // Random changes: `inserts` new keys (half copies of a random row, half
  // attributes mixed from random rows), `deletes` keys removed, `updates`
  // keys given one attribute of another random row. Keys whose values an
  // update changed are added to `updated`.
  void change(std::mt19937_64& rng, size_t inserts, size_t deletes, size_t updates,
              const std::string& prefix, std::set<std::string>* updated = nullptr) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : rows_) keys.push_back(k);
    auto pick = [&]() -> const Values& {
      return rows_.at(keys[std::uniform_int_distribution<size_t>(0, keys.size() - 1)(rng)]);
    };
    for (size_t i = 0; i < inserts; ++i) {
      Values v = pick();
      if (i % 2)
        for (size_t a = 0; a < v.size(); ++a) v[a] = pick()[a];
      rows_[prefix + std::to_string(i)] = std::move(v);
    }
    std::shuffle(keys.begin(), keys.end(), rng);
    for (size_t i = 0; i < updates && i < keys.size(); ++i) {
      const size_t a = std::uniform_int_distribution<size_t>(0, names_.size() - 1)(rng);
      auto value = pick()[a];
      auto& row = rows_.at(keys[i]);
      if (updated && row[a] != value) updated->insert(keys[i]);
      row[a] = value;
    }
    for (size_t i = 0; i < deletes && updates + i < keys.size(); ++i)
      rows_.erase(keys[updates + i]);
  }

 private:
  std::vector<std::string> names_;
  std::map<std::string, Values> rows_;
};

}  // namespace kanon::policy::testing
