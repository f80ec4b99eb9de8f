#include "rewriter/protected_index.h"

#include <algorithm>

namespace kanon::rewriter {
namespace {

std::pair<std::string, std::string> split_qualified(const std::string& qualified) {
  const size_t dot = qualified.find('.');
  if (dot == std::string::npos) return {"public", qualified};
  return {qualified.substr(0, dot), qualified.substr(dot + 1)};
}

}  // namespace

std::map<std::string, std::string> renamed_tables(const store::PolicySnapshot& snapshot) {
  std::map<std::string, std::string> out;
  if (!snapshot.catalog) return out;
  for (const auto& [name, table] : snapshot.tables)
    if (table)
      if (std::string now = store::renamed_to(*table, *snapshot.catalog); !now.empty())
        out.emplace(name, std::move(now));
  return out;
}

ProtectedIndex::ProtectedIndex(const store::PolicySnapshot& snapshot,
                               const std::vector<std::string>& listed) {
  const auto renamed = renamed_tables(snapshot);
  for (const auto& [name, table] : snapshot.tables) {
    const auto moved = renamed.find(name);
    auto [schema, rel] = split_qualified(moved == renamed.end() ? name : moved->second);
    const std::string masks = table ? table->masks.select_list() : std::string();
    add({name, schema, rel, table, false, masks});
    if (!table) continue;
    for (const auto& child : table->info.children) {
      auto [cs, cr] = split_qualified(child);
      add({name, cs, cr, table, true, masks});
    }
  }
  auto add_unbuilt = [&](const std::string& name) {
    if (by_qualified_.count(name)) return;
    auto [schema, rel] = split_qualified(name);
    add({name, schema, rel, nullptr, false, {}});
  };
  for (const auto& [name, current] : renamed) add_unbuilt(name);
  for (const auto& [name, error] : snapshot.errors) add_unbuilt(name);
  for (const auto& name : listed) add_unbuilt(name);
}

void ProtectedIndex::add(ProtectedTable t) {
  const std::string qualified = t.schema + "." + t.table;
  if (by_qualified_.count(qualified)) return;  // a parent's own entry wins over a child's
  by_name_[t.table].push_back(qualified);
  by_qualified_.emplace(qualified, std::move(t));
}

ProtectedIndex::Match ProtectedIndex::find(std::string_view schema, std::string_view name,
                                           const std::vector<std::string>& search_path,
                                           const ProtectedTable** out) const {
  *out = nullptr;
  if (!schema.empty()) {
    std::string key(schema);
    key += '.';
    key += name;
    const auto it = by_qualified_.find(key);
    if (it == by_qualified_.end()) return Match::kNone;
    *out = &it->second;
    return Match::kFound;
  }
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return Match::kNone;
  if (it->second.size() == 1) {
    *out = &by_qualified_.find(it->second.front())->second;
    return Match::kFound;
  }
  for (const auto& s : search_path) {
    for (const auto& q : it->second) {
      const auto& t = by_qualified_.find(q)->second;
      if (t.schema == s) {
        *out = &t;
        return Match::kFound;
      }
    }
  }
  *out = &by_qualified_.find(it->second.front())->second;
  return Match::kAmbiguous;
}

bool ProtectedIndex::has_name(std::string_view name) const {
  return by_name_.find(name) != by_name_.end();
}

std::vector<std::string> parse_search_path(std::string_view setting) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < setting.size()) {
    while (i < setting.size() && (setting[i] == ' ' || setting[i] == ',')) ++i;
    if (i >= setting.size()) break;
    std::string item;
    if (setting[i] == '"') {
      ++i;
      while (i < setting.size()) {
        if (setting[i] == '"') {
          if (i + 1 < setting.size() && setting[i + 1] == '"') {
            item += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        item += setting[i++];
      }
    } else {
      while (i < setting.size() && setting[i] != ',' && setting[i] != ' ') {
        char c = setting[i++];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        item += c;
      }
    }
    while (i < setting.size() && setting[i] != ',') ++i;
    if (!item.empty() && item != "$user") out.push_back(std::move(item));
  }
  return out;
}

}  // namespace kanon::rewriter
