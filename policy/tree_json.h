// The disclosure tree and released tuples as kanon stores them in schema
// kanon (kanon.releases.tree, release_rows.released, shared snapshots):
// JSON for trees, PostgreSQL text[] literals for tuples. No database here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/disclosure_tree.h"

namespace kanon::policy {

// The tree as stored in kanon.releases.tree, and back.
std::string tree_json(const DisclosureTree& tree);
DisclosureTree tree_from_json(const std::string& json, const TreeOptions& options);

// The released tuple a leaf names: the values of its path's "a = v" splits.
std::vector<std::optional<std::string>> leaf_tuple(const DisclosureTree& tree, int leaf);

// The elements of a text[] as PostgreSQL prints it (nullopt for NULL).
std::vector<std::optional<std::string>> parse_text_array(const std::string& text);

// A text[] literal of a tuple ("{\"a\",NULL,\"b c\"}"), as stored in
// release_rows.released.
std::string array_literal(const std::vector<std::optional<std::string>>& tuple);

}  // namespace kanon::policy
