// NameTable: the names of an enum's values, in one place, for parsing what a
// person wrote (job files, policy files, EXPORT options, command-line flags)
// and for printing. Aliases parse but are neither printed nor listed.
//
//   const NameTable<Algorithm> kNames{{Algorithm::kFlash, "flash"}, ...};
//   kNames.parse("bfs")  -> Algorithm::kBestFirst;  kNames.parse("x") -> nullopt
//   kNames.list()        -> "flash, bfs, mondrian"
//   kNames.unknown("x")  -> "'x' is not one of flash, bfs, mondrian"
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kanon::base {

template <typename Enum>
class NameTable {
 public:
  struct Entry {
    Enum value;
    const char* name;
    bool alias = false;  // accepted by parse(), never printed
  };

  NameTable(std::initializer_list<Entry> entries) : entries_(entries) {}

  std::optional<Enum> parse(std::string_view name) const {
    for (const auto& e : entries_)
      if (name == e.name) return e.value;
    return std::nullopt;
  }

  // The first name of `value` that is not an alias; "?" when there is none.
  const char* name(Enum value) const {
    for (const auto& e : entries_)
      if (e.value == value && !e.alias) return e.name;
    return "?";
  }

  // The names that are not aliases, in table order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_)
      if (!e.alias) out.emplace_back(e.name);
    return out;
  }

  // names() joined: "a, b, c", or "a, b or c" with last_separator " or ".
  std::string list(std::string_view last_separator = ", ") const {
    const auto all = names();
    std::string out;
    for (size_t i = 0; i < all.size(); ++i) {
      if (i > 0) out += i + 1 == all.size() ? last_separator : std::string_view(", ");
      out += all[i];
    }
    return out;
  }

  // The error text for a name parse() does not know.
  std::string unknown(std::string_view name) const {
    std::string out(1, '\'');
    out.append(name);
    out.append("' is not one of ");
    out.append(list());
    return out;
  }

 private:
  std::vector<Entry> entries_;
};

}  // namespace kanon::base
