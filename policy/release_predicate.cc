#include "policy/release_predicate.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

namespace kanon::policy {
namespace {

// Builds a reduced diagram into `tests`: identical tests are shared and a
// test whose branches agree is dropped.
class Interner {
 public:
  explicit Interner(std::vector<ReleasePredicate::Test>& tests) : tests_(tests) {}

  uint32_t test(int attribute, const std::string& value, uint32_t if_equal, uint32_t if_not) {
    if (if_equal == if_not) return if_equal;
    auto key = std::make_tuple(attribute, value, if_equal, if_not);
    const auto it = interned_.find(key);
    if (it != interned_.end()) return it->second;
    const auto id = static_cast<uint32_t>(tests_.size() + 2);
    tests_.push_back({attribute, value, if_equal, if_not});
    interned_.emplace(std::move(key), id);
    return id;
  }

 private:
  std::vector<ReleasePredicate::Test>& tests_;
  std::map<std::tuple<int, std::string, uint32_t, uint32_t>, uint32_t> interned_;
};

// The cofactor of `p` for rows whose `attribute` holds `value` (nullopt:
// NULL or a value never tested), built into `interner`.
uint32_t restrict_into(const ReleasePredicate& p, int attribute,
                       const std::optional<std::string>& value, Interner& interner) {
  std::map<uint32_t, uint32_t> memo;
  auto go = [&](auto&& self, uint32_t id) -> uint32_t {
    if (ReleasePredicate::constant(id)) return id;
    if (const auto it = memo.find(id); it != memo.end()) return it->second;
    const ReleasePredicate::Test& t = p.test(id);
    const uint32_t r =
        t.attribute == attribute
            ? self(self, value && *value == t.value ? t.if_equal : t.if_not)
            : interner.test(t.attribute, t.value, self(self, t.if_equal), self(self, t.if_not));
    memo.emplace(id, r);
    return r;
  };
  return go(go, p.root());
}

class Compiler {
 public:
  Compiler(const DisclosureTree& tree, int attribute, std::vector<ReleasePredicate::Test>& tests)
      : tree_(tree), attribute_(attribute), interner_(tests) {}

  uint32_t compile(int node) {
    const TreeNode& n = tree_.nodes()[static_cast<size_t>(node)];
    if (n.released >> attribute_ & 1) return ReleasePredicate::kTrue;
    if (n.leaf()) return ReleasePredicate::kFalse;
    const uint32_t l = compile(n.left);
    return interner_.test(n.attribute, n.value, l, compile(n.right));
  }

 private:
  const DisclosureTree& tree_;
  const int attribute_;
  Interner interner_;
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
  Interner interner(out.tests_);
  out.root_ = restrict_into(*this, attribute, value, interner);
  return out;
}

ReleasePredicate ReleasePredicate::switched(int attribute) const {
  ReleasePredicate out;
  out.attribute_ = attribute_;
  Interner interner(out.tests_);
  const std::vector<std::string> values = tested_values(attribute);
  std::vector<uint32_t> cofactors;
  for (const auto& v : values) cofactors.push_back(restrict_into(*this, attribute, v, interner));
  uint32_t next = restrict_into(*this, attribute, std::nullopt, interner);
  for (size_t i = values.size(); i-- > 0;)
    next = interner.test(attribute, values[i], cofactors[i], next);
  out.root_ = next;
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
