// ProtectedIndex: the protected tables of one policy snapshot, looked up the
// way the rewriter meets them in SQL — by qualified name, or by bare name
// whatever the search_path (conservative). Each table under the name the
// catalog gives its OID now (renamed_tables); a renamed table's policy name
// is listed without a snapshot, so it is denied. Inheritance children and
// partitions of a protected table are protected with the parent's masks.
// Tables listed in the policies without a built snapshot are in the index
// with a null snapshot, so references to them are denied (fail closed).
//
// Immutable once built; holds its own references to the table snapshots.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/policy_store.h"

namespace kanon::rewriter {

struct ProtectedTable {
  std::string policy_name;  // "schema.table" of the policy
  std::string schema;       // the relation's own name (the child's, for children)
  std::string table;
  std::shared_ptr<const policy::TableSnapshot> snapshot;  // null: listed, never built
  bool child = false;
  std::string select_list;  // the snapshot's masks, computed once
};

class ProtectedIndex {
 public:
  // `listed`: "schema.table" of every table the policies list (may be empty;
  // the snapshot's tables and errors are always included).
  ProtectedIndex(const store::PolicySnapshot& snapshot, const std::vector<std::string>& listed);

  enum class Match { kNone, kFound, kAmbiguous };
  // `schema` empty: a bare name. `search_path` picks among several protected
  // tables with the same bare name.
  Match find(std::string_view schema, std::string_view name,
             const std::vector<std::string>& search_path, const ProtectedTable** out) const;

  // True when some protected table (or child) has this bare name.
  bool has_name(std::string_view name) const;
  bool empty() const { return by_qualified_.empty(); }
  // pred(const ProtectedTable*) for every protected table (children left out).
  template <typename Pred>
  bool all_of(Pred pred) const {
    for (const auto& [name, t] : by_qualified_)
      if (!t.child && !pred(&t)) return false;
    return true;
  }

 private:
  void add(ProtectedTable t);

  std::map<std::string, ProtectedTable, std::less<>> by_qualified_;
  std::map<std::string, std::vector<std::string>, std::less<>> by_name_;  // name -> qualified
};

// Tables of the snapshot whose relation (by the OID bound at build) the
// snapshot's catalog now knows under another name: policy name -> current
// "schema.table". A protected table renamed or moved to another schema stays
// protected under its new name; its old name is denied until a build covers
// it (another object may take it).
std::map<std::string, std::string> renamed_tables(const store::PolicySnapshot& snapshot);

// The schemas of a search_path setting, in order, unquoted; "$user" and
// empty entries left out.
std::vector<std::string> parse_search_path(std::string_view setting);

}  // namespace kanon::rewriter
