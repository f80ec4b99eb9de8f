#include "publish/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/json.h"

namespace kanon::publish {

namespace {

std::string html(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string svg_histogram(const std::vector<std::pair<std::string, uint64_t>>& bars) {
  const int bar_w = 48, gap = 12, chart_h = 180, left = 50, bottom = 40, top = 20;
  const int width = left + static_cast<int>(bars.size()) * (bar_w + gap) + gap;
  const int height = top + chart_h + bottom;
  uint64_t max = 1;
  for (const auto& b : bars) max = std::max(max, b.second);
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"class-size histogram\">\n",
      width, height);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", left,
                   top + chart_h, width, top + chart_h);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", left, top,
                   left, top + chart_h);
  s += fmt::format("<text x=\"4\" y=\"{}\" font-size=\"11\">{}</text>\n", top + 4, max);
  s += fmt::format("<text x=\"4\" y=\"{}\" font-size=\"11\">0</text>\n", top + chart_h);
  for (size_t i = 0; i < bars.size(); ++i) {
    const int x = left + gap + static_cast<int>(i) * (bar_w + gap);
    const int h = static_cast<int>(static_cast<double>(chart_h) * bars[i].second / max);
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#2b6cb0\"><title>{} rows: {} "
        "classes</title></rect>\n",
        x, top + chart_h - h, bar_w, h, html(bars[i].first), bars[i].second);
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
                     x + bar_w / 2, top + chart_h - h - 4, bars[i].second);
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
                     x + bar_w / 2, top + chart_h + 16, html(bars[i].first));
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">rows per class</text>\n",
      left + (width - left) / 2, height - 6);
  return s + "</svg>\n";
}

base::Json risk_json(const RiskReport& risk) {
  using base::Json;
  using base::json_number;
  const auto& f = risk.figures;
  Json j;
  j["threshold"] = json_number(f.threshold);
  j["records"] = f.records;
  j["classes"] = f.classes;
  j["prosecutor"] = {{"highest", json_number(f.prosecutor.highest)},
                     {"records_at_highest", f.prosecutor.records_at_highest},
                     {"average", json_number(f.prosecutor.average)},
                     {"records_above_threshold", f.prosecutor.records_above},
                     {"share_above_threshold", json_number(f.prosecutor.share_above)}};
  if (f.journalist)
    j["journalist"] = {{"highest", json_number(f.journalist->highest)},
                       {"average", json_number(f.journalist->average)},
                       {"records_above_threshold", f.journalist->records_above},
                       {"share_above_threshold", json_number(f.journalist->share_above)}};
  else
    j["journalist"] = nullptr;
  j["marketer"] = json_number(f.marketer);
  j["marketer_from"] = f.with_population ? "population" : "release";
  if (risk.population.empty())
    j["population"] = nullptr;
  else
    j["population"] = {{"table", risk.population},
                       {"rows", risk.population_rows},
                       {"unplaced_rows", risk.population_unplaced}};
  j["population_note"] = risk.population_note.empty() ? Json(nullptr) : Json(risk.population_note);
  return j;
}

std::string risk_html(const ExportReport& r) {
  const auto& f = r.risk.figures;
  const std::string unit = r.counts_persons() ? "persons" : "records";
  std::string s =
      "<h2>Re-identification risk</h2>\n<p>Figures as ARX reports them (El Emam's "
      "prosecutor, journalist and marketer models; see kanon's docs/risk.md).";
  if (r.counts_persons()) s += " Class sizes count distinct persons.";
  s += "</p>\n<table>\n<tr><th>figure</th><th>value</th></tr>\n";
  const auto row = [&](const std::string& k, const std::string& v) {
    s += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", html(k), html(v));
  };
  const auto pct = [](double x) { return fmt::format("{:.2f}%", 100 * x); };
  row("threshold", fmt::format("{:.6g}", f.threshold));
  row("prosecutor: highest risk", fmt::format("{:.6g}", f.prosecutor.highest));
  row(unit + " at the highest risk", std::to_string(f.prosecutor.records_at_highest));
  row("prosecutor: average risk (success rate)", fmt::format("{:.6g}", f.prosecutor.average));
  row("prosecutor: " + unit + " above the threshold",
      fmt::format("{} ({})", f.prosecutor.records_above, pct(f.prosecutor.share_above)));
  if (f.journalist) {
    row("journalist: highest risk", fmt::format("{:.6g}", f.journalist->highest));
    row("journalist: average risk", fmt::format("{:.6g}", f.journalist->average));
    row("journalist: " + unit + " above the threshold",
        fmt::format("{} ({})", f.journalist->records_above, pct(f.journalist->share_above)));
  }
  row(f.with_population ? "marketer risk" : "marketer risk (no population: J / n)",
      fmt::format("{:.6g}", f.marketer));
  if (!r.risk.population.empty()) {
    row("population table", r.risk.population);
    row("population rows", std::to_string(r.risk.population_rows));
    row("population rows in no published class", std::to_string(r.risk.population_unplaced));
  }
  s += "</table>\n";
  if (!r.risk.population_note.empty())
    s += fmt::format("<p><strong>No journalist figures:</strong> {}</p>\n",
                     html(r.risk.population_note));
  return s;
}

}  // namespace

std::string ExportReport::levels_text() const {
  if (multidimensional()) return "per class (mondrian)";
  std::string s;
  for (const auto& a : attributes)
    s += fmt::format("{}{}={}", s.empty() ? "" : ", ", a.name, a.level);
  return s;
}

std::vector<std::pair<std::string, uint64_t>> class_size_histogram(
    const std::map<uint64_t, uint64_t>& size_counts) {
  std::vector<std::pair<std::string, uint64_t>> out;
  if (size_counts.size() <= 12) {
    for (const auto& [size, n] : size_counts) out.emplace_back(std::to_string(size), n);
    return out;
  }
  std::map<int, uint64_t> buckets;
  for (const auto& [size, n] : size_counts) {
    int b = 0;
    while ((uint64_t{2} << b) <= size) ++b;
    buckets[b] += n;
  }
  for (const auto& [b, n] : buckets) {
    const uint64_t lo = uint64_t{1} << b, hi = (uint64_t{2} << b) - 1;
    out.emplace_back(lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi), n);
  }
  return out;
}

std::string report_to_json(const ExportReport& r) {
  using base::Json;
  using base::json_number;
  Json doc;
  doc["created_at"] = r.created_at;
  doc["source"] = r.source;
  doc["target"] = r.target;
  doc["command"] = r.command;
  doc["privacy"] = r.privacy;
  doc["k"] = r.k;
  doc["metric"] = r.metric;
  doc["algorithm"] = r.algorithm;
  doc["rows_in"] = r.rows_in;
  doc["rows_out"] = r.rows_out;
  doc["suppressed"] = r.suppressed;
  doc["suppression_limit"] = r.suppression_limit;
  doc["suppressed_rows"] = r.suppressed_rows;
  if (r.counts_persons()) {
    doc["counts"] = "persons";
    doc["person"] = r.person;
  }
  doc["classes"] = r.classes;
  doc["min_class_size"] = r.min_class;
  doc["max_class_size"] = r.max_class;
  auto& attributes = doc["attributes"] = Json::array();
  for (const auto& a : r.attributes) {
    Json examples = Json::array();
    for (const auto& [from, to] : a.examples) examples.push_back({from, to});
    attributes.push_back({{"name", a.name},
                          {"level", a.level < 0 ? Json(nullptr) : Json(a.level)},
                          {"height", a.height},
                          {"hierarchy", a.hierarchy},
                          {"distinct_before", a.distinct_before},
                          {"distinct_after", a.distinct_after},
                          {"released_fraction", json_number(a.released_fraction)},
                          {"precision", a.precision ? json_number(*a.precision) : Json(nullptr)},
                          {"loss", a.loss ? json_number(*a.loss) : Json(nullptr)},
                          {"examples", std::move(examples)}});
  }
  doc["risk"] = risk_json(r.risk);
  auto& loss = doc["loss"] = Json::object();
  for (const auto& [name, v] : r.losses) loss[name] = json_number(v);
  auto& histogram = doc["class_size_histogram"] = Json::array();
  for (const auto& [rows, classes] : r.histogram)
    histogram.push_back({{r.counts_persons() ? "persons" : "rows", rows}, {"classes", classes}});
  doc["lattice"] = {{"size", r.lattice_size},
                    {"checked", r.checked},
                    {"search_ms", json_number(r.search_ms, 3)},
                    {"timed_out", r.timed_out}};
  doc["total_ms"] = json_number(r.total_ms, 3);
  return base::json_text(doc);
}

std::string report_to_html(const ExportReport& r) {
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kanon export "
      "report: " +
      html(r.target) +
      "</title>\n<style>\n"
      "body{font-family:sans-serif;margin:2em;color:#222;background:#fff}\n"
      "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
      "th,td{border:1px solid #bbb;padding:4px 10px;text-align:left}\n"
      "th{background:#e8eef6}\ncode{background:#f3f3f3;padding:2px 4px}\n"
      "</style>\n</head>\n<body>\n";
  s += fmt::format("<h1>Export of {} to {}</h1>\n", html(r.source), html(r.target));
  s += fmt::format("<p>Created {} by <code>{}</code></p>\n", html(r.created_at), html(r.command));
  s += "<h2>Summary</h2>\n<table>\n";
  const auto row = [&](const std::string& k, const std::string& v) {
    s += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html(k), html(v));
  };
  row("privacy model", r.privacy);
  const std::string unit = r.counts_persons() ? " in persons" : "";
  if (r.counts_persons()) row("classes counted in", "distinct persons of " + r.person);
  row("smallest class" + unit + " (k achieved)", std::to_string(r.min_class));
  row("largest class" + unit, std::to_string(r.max_class));
  row("classes", std::to_string(r.classes));
  row("rows read", std::to_string(r.rows_in));
  row("rows published", std::to_string(r.rows_out));
  row("suppressed rows",
      fmt::format("{} (limit {}; {})", r.suppressed, r.suppression_limit,
                  r.suppressed_rows == "drop" ? "removed from the table" : "published with '*'"));
  row("algorithm", r.algorithm);
  row(r.multidimensional() ? "loss reported" : "optimized metric", r.metric);
  s += "</table>\n<h2>Generalization per attribute</h2>\n<table>\n"
       "<tr><th>attribute</th><th>level</th><th>hierarchy</th><th>distinct values before</th>"
       "<th>after</th><th>released</th><th>precision loss</th><th>loss</th><th>examples</th>"
       "</tr>\n";
  for (const auto& a : r.attributes) {
    std::string ex;
    for (const auto& [from, to] : a.examples)
      ex += fmt::format("{}{} &rarr; {}", ex.empty() ? "" : "<br>", html(from), html(to));
    const auto opt = [](const std::optional<double>& x) {
      return x ? fmt::format("{:.4f}", *x) : std::string("&ndash;");
    };
    s += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}%</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        html(a.name),
        a.level < 0 ? std::string("per class") : fmt::format("{} of {}", a.level, a.height - 1),
        html(a.hierarchy), a.distinct_before, a.distinct_after, 100 * a.released_fraction,
        opt(a.precision), opt(a.loss), ex);
  }
  s += "</table>\n" + risk_html(r);
  s += std::string("<h2>Class sizes")
           .append(r.counts_persons() ? " (distinct persons)" : "")
           .append("</h2>\n")
           .append(svg_histogram(r.histogram));
  s += "<h2>Information loss</h2>\n<table>\n<tr><th>metric</th><th>value</th></tr>\n";
  for (const auto& [name, v] : r.losses)
    s += fmt::format("<tr><td>{}</td><td>{:.6g}</td></tr>\n", html(name), v);
  if (r.multidimensional()) {
    s += "</table>\n<h2>Partitioning</h2>\n<p>Mondrian cuts the table at medians until no cut "
         "keeps the privacy model; each class is published with the range, set or hierarchy "
         "node that covers its values.</p>\n<table>\n";
    row("classes", std::to_string(r.classes));
    row("partitioning time", fmt::format("{:.1f} ms", r.search_ms));
  } else {
    s += "</table>\n<h2>Search</h2>\n<table>\n";
    row("lattice size", std::to_string(r.lattice_size));
    row("transformations checked", std::to_string(r.checked));
    row("search time", fmt::format("{:.1f} ms", r.search_ms));
    row("stopped by time limit", r.timed_out ? "yes (best found so far)" : "no");
  }
  row("total time", fmt::format("{:.1f} ms", r.total_ms));
  s += "</table>\n</body>\n</html>\n";
  return s;
}

}  // namespace kanon::publish
