#include "policy/tree_json.h"

#include "base/json.h"

namespace kanon::policy {

// Parses a text[] value as PostgreSQL prints it (elements quoted when
// needed, NULL unquoted).
std::vector<std::optional<std::string>> parse_text_array(const std::string& text) {
  std::vector<std::optional<std::string>> out;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}')
    throw std::runtime_error("kanon.release_rows: malformed released array " + text);
  size_t i = 1;
  if (text.size() == 2) return out;
  for (;;) {
    std::string v;
    bool quoted = false;
    if (text[i] == '"') {
      quoted = true;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
        v += text[i];
      }
      ++i;
    } else {
      for (; i < text.size() && text[i] != ',' && text[i] != '}'; ++i) v += text[i];
    }
    if (!quoted && v == "NULL")
      out.emplace_back();
    else
      out.emplace_back(std::move(v));
    if (i >= text.size() || text[i] == '}') break;
    ++i;  // ','
  }
  return out;
}

std::string array_literal(const std::vector<std::optional<std::string>>& tuple) {
  std::string out = "{";
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (i) out += ',';
    if (!tuple[i]) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char c : *tuple[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string tree_json(const DisclosureTree& tree) {
  base::Json nodes = base::Json::array();
  for (const auto& n : tree.nodes()) {
    if (n.leaf())
      nodes.push_back({{"rows", n.rows}});
    else
      nodes.push_back({{"attribute", n.attribute},
                       {"value", n.value},
                       {"left", n.left},
                       {"right", n.right},
                       {"rows", n.rows}});
  }
  base::Json doc = {{"attributes", tree.attributes()}, {"nodes", std::move(nodes)}};
  return doc.dump();
}

DisclosureTree tree_from_json(const std::string& json, const TreeOptions& options) {
  const auto doc = nlohmann::json::parse(json);
  std::vector<TreeNode> nodes;
  for (const auto& j : doc.at("nodes")) {
    TreeNode n;
    n.rows = j.at("rows").get<uint64_t>();
    if (j.contains("attribute")) {
      n.attribute = j.at("attribute").get<int>();
      n.value = j.at("value").get<std::string>();
      n.left = j.at("left").get<int>();
      n.right = j.at("right").get<int>();
    }
    nodes.push_back(std::move(n));
  }
  return DisclosureTree::from_nodes(doc.at("attributes").get<std::vector<std::string>>(),
                                    std::move(nodes), options);
}

std::vector<std::optional<std::string>> leaf_tuple(const DisclosureTree& tree, int leaf) {
  std::vector<std::optional<std::string>> out(tree.attributes().size());
  for (const auto& c : tree.path(leaf))
    if (c.equal) out[static_cast<size_t>(c.attribute)] = c.value;
  return out;
}

}  // namespace kanon::policy
