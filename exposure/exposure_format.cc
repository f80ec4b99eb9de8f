// The exposure report for a terminal (`kanon check`) and as JSON
// (`kanon check --format json`).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/json.h"
#include "base/text.h"
#include "exposure/exposure.h"

namespace kanon::exposure {
namespace {

using base::join;

// Display width of UTF-8 text: one column per code point.
size_t width(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, size_t w) {
  const size_t n = width(s);
  return n >= w ? s : s + std::string(w - n, ' ');
}

}  // namespace

std::string exposure_report_text(const ExposureReport& report) {
  std::string out =
      fmt::format("kanon check: database {}, {} protected table{}, {} login{} checked\n",
                  report.database, report.tables, report.tables == 1 ? "" : "s",
                  report.logins_checked, report.logins_checked == 1 ? "" : "s");
  if (!report.rows.empty()) {
    const std::vector<std::string> head = {"ROLE", "PATH", "OBJECT", "REACHES"};
    size_t w[3] = {head[0].size(), head[1].size(), head[2].size()};
    for (const auto& x : report.rows) {
      w[0] = std::max(w[0], width(x.role));
      w[1] = std::max(w[1], width(to_string(x.path)));
      w[2] = std::max(w[2], width(x.object));
    }
    out += "\n" + pad(head[0], w[0]) + "  " + pad(head[1], w[1]) + "  " + pad(head[2], w[2]) +
           "  " + head[3] + "\n";
    for (const auto& x : report.rows) {
      out += pad(x.role, w[0]) + "  " + pad(to_string(x.path), w[1]) + "  " + pad(x.object, w[2]) +
             "  " + join(x.reaches) + "\n";
      out += "    " + x.detail + "\n";
      out += "    fix: " + x.fix + "\n";
    }
  }
  std::set<std::string> roles;
  for (const auto& x : report.rows)
    if (!x.informational()) roles.insert(x.role);
  const size_t exposures = report.exposures();
  const size_t info = report.rows.size() - exposures;
  out += "\n";
  if (exposures == 0)
    out += "no exposures: no restricted login has a path to a protected table outside kanon";
  else
    out += fmt::format("{} exposure{} for {} login{}", exposures, exposures == 1 ? "" : "s",
                       roles.size(), roles.size() == 1 ? "" : "s");
  if (info)
    out +=
        fmt::format("; {} informational row{} (exempt through a role)", info, info == 1 ? "" : "s");
  out += "\n";
  if (!report.history.empty()) {
    out += "\nprivacy over time (VERIFY HISTORY):\n";
    for (const auto& h : report.history) {
      out += "  " + h.table + " (" + h.row_key + "): ";
      if (h.linkable && h.error.empty() && h.releases > 0)
        out += fmt::format("{} releases, {} linked rows, real k {} (policy k {}): ", h.releases,
                           h.linked_rows, h.min_candidates, h.k);
      out += h.verdict() + "\n";
    }
  }
  for (const auto& note : report.notes) out += "note: " + note + "\n";
  return out;
}

std::string exposure_report_json(const ExposureReport& report) {
  base::Json doc;
  doc["database"] = report.database;
  doc["tables"] = report.tables;
  doc["logins_checked"] = report.logins_checked;
  doc["exposures"] = report.exposures();
  doc["rows"] = base::Json::array();
  for (const auto& x : report.rows) {
    base::Json row;
    row["role"] = x.role;
    row["path"] = to_string(x.path);
    row["object"] = x.object;
    row["reaches"] = x.reaches;
    row["detail"] = x.detail;
    row["fix"] = x.fix;
    row["informational"] = x.informational();
    doc["rows"].push_back(std::move(row));
  }
  doc["notes"] = report.notes;
  doc["history"] = base::Json::array();
  for (const auto& h : report.history) {
    base::Json row;
    row["table"] = h.table;
    row["row_key"] = h.row_key;
    row["linkable"] = h.linkable;
    row["policy_k"] = h.k;
    row["releases"] = h.releases;
    row["linked_rows"] = h.linked_rows;
    row["real_k"] = h.min_candidates;
    row["rows_below_k"] = h.rows_below_k;
    row["rows_below_k_through_updates"] = h.updated_rows_below_k;
    row["new_rows"] = h.new_rows;
    row["rows_below_k_arrived_late"] = h.late_rows_below_k;
    row["rows_below_k_through_deletions"] = h.deleted_rows_below_k;
    row["verdict"] = h.verdict();
    doc["history"].push_back(std::move(row));
  }
  return base::json_text(doc, 2);
}

}  // namespace kanon::exposure
