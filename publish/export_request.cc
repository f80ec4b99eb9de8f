#include "publish/export_request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <vector>

#include "base/sqlstate.h"
#include "base/text.h"
#include "policy/policy_file.h"

namespace kanon::publish {

namespace {

using base::lower;

enum class Tok { kWord, kString, kPunct, kEnd };

struct Token {
  Tok kind;
  std::string text;
};

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
         c == '/' || c == '"' || c == '*';
}

std::vector<Token> tokenize(const std::string& text) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ';') {
      ++i;
    } else if (c == '\'') {
      std::string s;
      ++i;
      for (;;) {
        if (i >= text.size())
          throw ExportError(sqlstate::kSyntaxError, "kanon export: unterminated quoted string");
        if (text[i] == '\'') {
          if (i + 1 < text.size() && text[i + 1] == '\'') {
            s += '\'';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        s += text[i++];
      }
      out.push_back({Tok::kString, s});
    } else if (c == '(' || c == ')' || c == ',' || c == '=') {
      out.push_back({Tok::kPunct, std::string(1, c)});
      ++i;
    } else if (word_char(c)) {
      std::string s;
      bool quoted = false;
      while (i < text.size() && (quoted || word_char(text[i]))) {
        if (text[i] == '"') quoted = !quoted;
        s += text[i++];
      }
      out.push_back({Tok::kWord, s});
    } else {
      throw ExportError(sqlstate::kSyntaxError,
                        fmt::format("kanon export: unexpected character '{}'", c));
    }
  }
  out.push_back({Tok::kEnd, ""});
  return out;
}

std::string unquote_ident(const std::string& s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

const char* kUsage =
    "EXPORT <table> [TO <schema.table> | TO '<path.csv>'] [WITH (option = value, ...)]";

double number(const std::string& key, const std::string& v) {
  size_t used = 0;
  double d = 0;
  try {
    d = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || !std::isfinite(d))
    throw ExportError(sqlstate::kInvalidParameterValue,
                      fmt::format("kanon export: option {}: '{}' is not a number", key, v));
  return d;
}

uint32_t whole(const std::string& key, const std::string& v, uint32_t min) {
  const double d = number(key, v);
  if (d != std::floor(d) || d < min || d > (1u << 30))
    throw ExportError(sqlstate::kInvalidParameterValue,
                      fmt::format("kanon export: option {}: '{}' must be a whole number "
                                  "of at least {}",
                                  key, v, min));
  return static_cast<uint32_t>(d);
}

bool boolean(const std::string& key, const std::string& v) {
  const std::string l = lower(v);
  if (l == "true" || l == "on" || l == "yes") return true;
  if (l == "false" || l == "off" || l == "no") return false;
  throw ExportError(sqlstate::kInvalidParameterValue,
                    fmt::format("kanon export: option {}: '{}' is not true or false", key, v));
}

}  // namespace

ExportRequest parse_export_command(const std::string& text) {
  const auto toks = tokenize(text);
  size_t i = 0;
  const auto syntax = [&](const std::string& what) {
    return ExportError(sqlstate::kSyntaxError,
                       fmt::format("kanon export: {}; usage: {}", what, kUsage));
  };
  if (toks[i].kind != Tok::kWord || lower(toks[i].text) != "export")
    throw syntax("not an EXPORT command");
  ++i;
  ExportRequest r;
  r.command = text;
  while (!r.command.empty() &&
         (std::isspace(static_cast<unsigned char>(r.command.back())) || r.command.back() == ';'))
    r.command.pop_back();
  if (toks[i].kind != Tok::kWord) throw syntax("missing the table to export");
  r.source = toks[i++].text;
  if (toks[i].kind == Tok::kWord && lower(toks[i].text) == "to") {
    ++i;
    if (toks[i].kind == Tok::kString) {
      r.csv_path = toks[i++].text;
      if (r.csv_path.empty()) throw syntax("TO '' names no file");
    } else if (toks[i].kind == Tok::kWord) {
      r.target_table = toks[i++].text;
    } else {
      throw syntax("TO needs a table or a quoted file path");
    }
  }
  if (toks[i].kind == Tok::kWord && lower(toks[i].text) == "with") {
    ++i;
    if (toks[i].text != "(") throw syntax("WITH needs '('");
    ++i;
    for (;;) {
      if (toks[i].kind != Tok::kWord) throw syntax("expected an option name");
      const std::string key = lower(unquote_ident(toks[i++].text));
      if (toks[i].text != "=") throw syntax(fmt::format("expected '=' after {}", key));
      ++i;
      if (toks[i].kind != Tok::kWord && toks[i].kind != Tok::kString)
        throw syntax(fmt::format("option {} needs a value", key));
      if (r.with.count(key)) throw syntax(fmt::format("option {} given twice", key));
      r.with[key] = toks[i++].text;
      if (toks[i].text == ",") {
        ++i;
        continue;
      }
      if (toks[i].text == ")") {
        ++i;
        break;
      }
      throw syntax("expected ',' or ')' in WITH");
    }
  }
  if (toks[i].kind != Tok::kEnd) throw syntax(fmt::format("unexpected '{}'", toks[i].text));
  return r;
}

ExportSettings resolve_settings(const ExportRequest& request, const policy::TablePolicy& p) {
  ExportSettings s;
  s.k = p.k;
  s.suppression = p.export_options.suppression;
  s.metric = engine::parse_metric(p.export_options.metric).value_or(engine::MetricKind::kLoss);
  s.hierarchies = p.export_options.hierarchies;
  if (p.sensitive) s.l = p.sensitive->l;
  s.algorithm =
      engine::parse_algorithm(p.export_options.algorithm).value_or(engine::Algorithm::kFlash);
  s.grant = p.export_options.grant;
  s.risk_threshold = p.risk_threshold();
  s.population_schema = p.risk.population_schema;
  s.population_table = p.risk.population_table;
  bool choice_given = false, grant_given = false;
  for (const auto& [key, v] : request.with) {
    if (key == "k") {
      s.k = whole(key, v, 2);
    } else if (key == "l") {
      s.l = whole(key, v, 1);
      if (*s.l <= 1) s.l.reset();
    } else if (key == "suppression") {
      s.suppression = number(key, v);
      if (s.suppression < 0 || s.suppression > 1)
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option suppression: '{}' must be a "
                                      "fraction of rows between 0 and 1",
                                      v));
    } else if (key == "metric") {
      const auto m = engine::parse_metric(lower(v));
      if (!m)
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option metric: unknown metric '{}' "
                                      "({})",
                                      v, engine::metric_names().list()));
      s.metric = *m;
    } else if (key == "algorithm") {
      const auto a = engine::parse_algorithm(lower(v));
      if (!a)
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option algorithm: '{}' is not "
                                      "supported by EXPORT ({})",
                                      v, engine::algorithm_names().list()));
      s.algorithm = *a;
    } else if (key == "choice") {
      const auto c = engine::parse_mondrian_choice(lower(v));
      if (!c)
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option choice: '{}' is not {}", v,
                                      engine::mondrian_choices().list(" or ")));
      s.choice = *c;
      choice_given = true;
    } else if (key == "time_limit") {
      const auto d = base::parse_duration(v);
      if (!d)
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option time_limit: '{}' is not a "
                                      "duration (30, 30s, 2m)",
                                      v));
      s.time_limit_s = static_cast<double>(d->count()) / 1000.0;
    } else if (key == "hierarchies") {
      s.hierarchy_dir = v;
      if (!std::filesystem::is_directory(v))
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option hierarchies: '{}' is not a "
                                      "directory",
                                      v));
    } else if (key.rfind("hierarchy.", 0) == 0) {
      const std::string column = unquote_ident(key.substr(10));
      if (!std::filesystem::is_regular_file(v))
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option {}: file '{}' does not exist", key, v));
      s.hierarchies[column] = v;
    } else if (key == "suppressed") {
      const std::string m = lower(v);
      if (m != "drop" && m != "mask")
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option suppressed: '{}' must be "
                                      "drop or mask",
                                      v));
      s.drop_suppressed = m == "drop";
    } else if (key == "report_dir") {
      s.report_dir = v;
    } else if (key == "grant") {
      s.grant.clear();  // the option replaces the policy's list
      grant_given = true;
      std::string role;
      for (size_t i = 0; i <= v.size(); ++i) {
        if (i == v.size() || v[i] == ',') {
          while (!role.empty() && role.back() == ' ') role.pop_back();
          if (role.empty())
            throw ExportError(sqlstate::kInvalidParameterValue,
                              fmt::format("kanon export: option grant: '{}' has an empty "
                                          "role name",
                                          v));
          s.grant.push_back(role);
          role.clear();
        } else if (!(role.empty() && v[i] == ' ')) {
          role += v[i];
        }
      }
    } else if (key == "replace") {
      s.replace = boolean(key, v);
    } else if (key == "dry_run") {
      s.dry_run = boolean(key, v);
    } else if (key == "risk_threshold") {
      s.risk_threshold = number(key, v);
      if (!(s.risk_threshold > 0 && s.risk_threshold <= 1))
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: option risk_threshold: '{}' must be a "
                                      "probability above 0 and at most 1",
                                      v));
    } else if (key == "population") {
      if (lower(v) == "none") {
        s.population_schema.clear();
        s.population_table.clear();
      } else {
        const auto parts = policy::split_table_name(v);
        if (!parts)
          throw ExportError(sqlstate::kInvalidParameterValue,
                            fmt::format("kanon export: option population: '{}' is not a "
                                        "schema-qualified table name (schema.table) or none",
                                        v));
        s.population_schema = parts->first;
        s.population_table = parts->second;
      }
    } else {
      throw ExportError(
          sqlstate::kInvalidParameterValue,
          fmt::format(
              "kanon export: unknown option '{}' (k, l, suppression, metric, "
              "algorithm, choice, time_limit, hierarchies, hierarchy.<column>, "
              "suppressed, report_dir, replace, grant, risk_threshold, population, dry_run)",
              key));
    }
  }
  for (const auto& [column, file] : s.hierarchies) {
    if (std::find(p.quasi_identifiers.begin(), p.quasi_identifiers.end(), column) ==
        p.quasi_identifiers.end())
      throw ExportError(sqlstate::kInvalidParameterValue,
                        fmt::format("kanon export: hierarchy for '{}': not a "
                                    "quasi-identifier of {} ({})",
                                    column, p.name(), fmt::join(p.quasi_identifiers, ", ")));
  }
  if (choice_given && s.algorithm != engine::Algorithm::kMondrian)
    throw ExportError(sqlstate::kInvalidParameterValue,
                      "kanon export: option choice: only algorithm = mondrian chooses "
                      "cut attributes");
  if (s.l && !p.sensitive)
    throw ExportError(sqlstate::kInvalidParameterValue,
                      fmt::format("kanon export: option l: {} has no sensitive attribute "
                                  "in its policy",
                                  p.name()));
  if (!request.csv_path.empty()) {
    s.csv_path = request.csv_path;
  } else if (!request.target_table.empty()) {
    const auto parts = policy::split_table_name(request.target_table);
    if (parts) {
      s.target_schema = parts->first;
      s.target_table = parts->second;
    } else {
      s.target_schema = p.schema;
      s.target_table = unquote_ident(request.target_table);
    }
  } else {
    s.target_schema = p.schema;
    s.target_table = p.table + "_anonymized";
  }
  if (!s.csv_path.empty() && !grant_given) s.grant.clear();  // the policy's list is for tables
  if (!s.csv_path.empty() && !s.grant.empty())
    throw ExportError(sqlstate::kInvalidParameterValue,
                      "kanon export: option grant: only a table target can be granted");
  if (s.target_schema == p.schema && s.target_table == p.table)
    throw ExportError(sqlstate::kInvalidParameterValue,
                      fmt::format("kanon export: the target is the source table {}", p.name()));
  if (s.csv_path.empty()) {
    // The export writes as kanon's service account (DROP with replace):
    // never kanon's own tables, the audit trail or another protected table.
    if (s.target_schema == "kanon" || s.target_schema == "kanon_mask")
      throw ExportError(sqlstate::kInvalidParameterValue,
                        fmt::format("kanon export: the target {}.{} is in kanon's own schema",
                                    s.target_schema, s.target_table));
    const std::string target = s.target_schema + "." + s.target_table;
    for (const auto& reserved : request.reserved_targets)
      if (reserved == target)
        throw ExportError(sqlstate::kInvalidParameterValue,
                          fmt::format("kanon export: the target {} is a protected table or the "
                                      "audit trail's",
                                      target));
  }
  if (s.report_dir.empty())
    s.report_dir = (std::filesystem::temp_directory_path() / "kanon-exports").string();
  return s;
}

std::string hierarchy_file(const ExportSettings& s, const std::string& column) {
  if (auto it = s.hierarchies.find(column); it != s.hierarchies.end()) return it->second;
  if (s.hierarchy_dir.empty()) return "";
  namespace fs = std::filesystem;
  for (const char* ext : {".csv", ".yaml", ".yml"}) {
    const fs::path f = fs::path(s.hierarchy_dir) / (column + ext);
    if (fs::is_regular_file(f)) return f.string();
  }
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(s.hierarchy_dir)) {
    const std::string name = e.path().filename().string();
    const std::string suffix = "hierarchy_" + column + ".csv";
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? "" : found.front();
}

}  // namespace kanon::publish
