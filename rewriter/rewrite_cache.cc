#include "rewriter/rewrite_cache.h"

namespace kanon::rewriter {

namespace {

// Length-prefixed, so no two field lists make the same key.
void add_field(std::string& key, std::string_view value) {
  key += std::to_string(value.size());
  key += ':';
  key += value;
}

}  // namespace

std::string rewrite_cache_key(uint64_t policy_version, uint64_t policy_identity,
                              const PlanContext& context, std::string_view sql) {
  std::string key;
  key.reserve(sql.size() + context.search_path.size() + context.role.size() +
              context.database.size() + 64);
  key += std::to_string(policy_version);
  key += ':';
  key += std::to_string(policy_identity);
  key += context.exempt ? ":e:" : ":r:";
  key += context.protected_database ? "p:" : "u:";
  key += context.reads_nothing_protected ? "n:" : "c:";
  key += context.serial_masks ? "s:" : "w:";
  key += context.event_triggers_confirmed ? "t:" : "f:";
  add_field(key, context.search_path);
  add_field(key, context.role);
  add_field(key, context.database);
  key += std::to_string(context.exempt_tables.size());
  key += ':';
  for (const auto& t : context.exempt_tables) add_field(key, t);
  key += std::to_string(context.absent_names.size());
  key += ':';
  for (const auto& n : context.absent_names) add_field(key, n);
  key += context.parse_message ? "x" : "q";
  for (const uint32_t t : context.parameter_types) {
    key += std::to_string(t);
    key += ',';
  }
  key += ':';
  key += sql;
  return key;
}

}  // namespace kanon::rewriter
