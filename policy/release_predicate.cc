#include "policy/release_predicate.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

namespace kanon::policy {
namespace {

class Compiler {
 public:
  Compiler(const DisclosureTree& tree, int attribute, std::vector<ReleasePredicate::Test>& tests)
      : tree_(tree), attribute_(attribute), tests_(tests) {}

  uint32_t compile(int node) {
    const TreeNode& n = tree_.nodes()[static_cast<size_t>(node)];
    if (n.released >> attribute_ & 1) return ReleasePredicate::kTrue;
    if (n.leaf()) return ReleasePredicate::kFalse;
    const uint32_t l = compile(n.left);
    const uint32_t r = compile(n.right);
    if (l == r) return l;
    auto key = std::make_tuple(n.attribute, n.value, l, r);
    const auto it = interned_.find(key);
    if (it != interned_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(tests_.size() + 2);
    tests_.push_back({n.attribute, n.value, l, r});
    interned_.emplace(std::move(key), id);
    return id;
  }

 private:
  const DisclosureTree& tree_;
  const int attribute_;
  std::vector<ReleasePredicate::Test>& tests_;
  std::map<std::tuple<int, std::string, uint32_t, uint32_t>, uint32_t> interned_;
};

void collect(const ReleasePredicate& p, uint32_t id, std::set<uint32_t>& seen) {
  if (ReleasePredicate::constant(id) || !seen.insert(id).second) return;
  collect(p, p.test(id).if_equal, seen);
  collect(p, p.test(id).if_not, seen);
}

void paths(const ReleasePredicate& p, uint32_t id, const std::vector<std::string>& names,
           std::vector<std::string>& current, std::vector<std::string>& out) {
  if (id == ReleasePredicate::kFalse) return;
  if (id == ReleasePredicate::kTrue) {
    std::string conj;
    for (const auto& c : current) conj += (conj.empty() ? "" : " AND ") + c;
    out.push_back(current.size() > 1 ? "(" + conj + ")" : conj);
    return;
  }
  const auto& t = p.test(id);
  const std::string& name = names[static_cast<size_t>(t.attribute)];
  current.push_back(fmt::format("({} = {})", name, t.value));
  paths(p, t.if_equal, names, current, out);
  current.back() = fmt::format("({} <> {})", name, t.value);
  paths(p, t.if_not, names, current, out);
  current.pop_back();
}

}  // namespace

std::vector<ReleasePredicate> compile_release_predicates(const DisclosureTree& tree) {
  std::vector<ReleasePredicate> out(tree.attributes().size());
  for (size_t a = 0; a < out.size(); ++a) {
    Compiler c(tree, static_cast<int>(a), out[a].tests_);
    out[a].root_ = c.compile(0);
    out[a].attribute_ = static_cast<int>(a);
  }
  return out;
}

size_t ReleasePredicate::size() const {
  std::set<uint32_t> seen;
  collect(*this, root_, seen);
  return seen.size();
}

bool ReleasePredicate::evaluate(std::span<const std::optional<std::string_view>> values) const {
  uint32_t id = root_;
  while (!constant(id)) {
    const Test& t = test(id);
    const auto& v = values[static_cast<size_t>(t.attribute)];
    id = (v && *v == t.value) ? t.if_equal : t.if_not;
  }
  return id == kTrue;
}

ReleasePredicate ReleasePredicate::restricted(int attribute,
                                              const std::optional<std::string>& value) const {
  ReleasePredicate out;
  out.attribute_ = attribute_;
  std::map<std::tuple<int, std::string, uint32_t, uint32_t>, uint32_t> interned;
  std::map<uint32_t, uint32_t> memo;
  auto go = [&](auto&& self, uint32_t id) -> uint32_t {
    if (constant(id)) return id;
    if (const auto it = memo.find(id); it != memo.end()) return it->second;
    const Test& t = test(id);
    uint32_t r;
    if (t.attribute == attribute) {
      r = self(self, value && *value == t.value ? t.if_equal : t.if_not);
    } else {
      const uint32_t l = self(self, t.if_equal), n = self(self, t.if_not);
      if (l == n) {
        r = l;
      } else {
        auto key = std::make_tuple(t.attribute, t.value, l, n);
        const auto it = interned.find(key);
        if (it != interned.end()) {
          r = it->second;
        } else {
          r = static_cast<uint32_t>(out.tests_.size() + 2);
          out.tests_.push_back({t.attribute, t.value, l, n});
          interned.emplace(std::move(key), r);
        }
      }
    }
    memo.emplace(id, r);
    return r;
  };
  out.root_ = go(go, root_);
  return out;
}

std::vector<std::string> ReleasePredicate::tested_values(int attribute) const {
  std::vector<std::string> out;
  std::set<std::string> seen_values;
  std::set<uint32_t> seen{root_};
  std::vector<uint32_t> level{root_};
  while (!level.empty()) {
    std::vector<uint32_t> next;
    for (uint32_t id : level) {
      if (constant(id)) continue;
      const Test& t = test(id);
      if (t.attribute == attribute && seen_values.insert(t.value).second) out.push_back(t.value);
      for (uint32_t c : {t.if_not, t.if_equal})
        if (seen.insert(c).second) next.push_back(c);
    }
    level = std::move(next);
  }
  return out;
}

std::string ReleasePredicate::rule_text(const std::vector<std::string>& names) const {
  if (root_ == kTrue) return "TRUE";
  if (root_ == kFalse) return "FALSE";
  std::vector<std::string> current, out;
  paths(*this, root_, names, current, out);
  std::string s;
  for (const auto& d : out) s += (s.empty() ? "" : " OR ") + d;
  return s;
}

}  // namespace kanon::policy
