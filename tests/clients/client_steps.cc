#include "tests/clients/client_steps.h"

#include <pqxx/pqxx>
#include <sstream>
#include <stdexcept>

namespace kanon::testing {

std::string encode_steps(const std::vector<Step>& steps) {
  std::string out;
  for (const auto& s : steps) {
    out += s.kind + "\t" + s.name + "\t" + s.sql;
    for (const auto& p : s.params) out += "\t" + p;
    out += "\n";
  }
  return out;
}

Sections parse_sections(const std::string& out) {
  Sections sections;
  Section* current = nullptr;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("== ", 0) == 0) {
      current = &sections[line.substr(3)];
    } else if (line.rfind("!! ", 0) == 0) {
      const auto tab = line.find('\t');
      const std::string name = line.substr(3, tab == std::string::npos ? tab : tab - 3);
      std::string error = tab == std::string::npos ? "" : line.substr(tab + 1);
      const auto tab2 = error.find('\t');
      if (tab2 != std::string::npos) error[tab2] = ' ';
      sections[name].error = error.empty() ? "(no message)" : error;
      current = nullptr;
    } else if (current != nullptr) {
      current->rows.push_back(line);
    } else {
      throw std::runtime_error("client printed a line outside any section: " + line);
    }
  }
  return sections;
}

std::vector<Step> expand(const std::vector<Step>& steps,
                         const std::map<std::string, std::string>& replacement) {
  std::vector<Step> out = steps;
  for (auto& s : out) {
    for (const auto& [name, text] : replacement) {
      const std::string token = "{" + name + "}";
      for (auto at = s.sql.find(token); at != std::string::npos;
           at = s.sql.find(token, at + text.size()))
        s.sql.replace(at, token.size(), text);
    }
  }
  return out;
}

std::string difference(const Sections& expected, const Sections& got) {
  for (const auto& [name, want] : expected) {
    const auto it = got.find(name);
    if (it == got.end()) return "section " + name + " is missing from the client's output";
    const Section& have = it->second;
    if (!want.error.empty() || !have.error.empty()) {
      if (want.error.substr(0, 5) != have.error.substr(0, 5))
        return "section " + name + ": expected " +
               (want.error.empty() ? "rows" : "error " + want.error) + ", got " +
               (have.error.empty() ? "rows" : "error " + have.error);
      continue;
    }
    for (size_t i = 0; i < want.rows.size() || i < have.rows.size(); ++i) {
      const std::string w = i < want.rows.size() ? want.rows[i] : "(no row)";
      const std::string h = i < have.rows.size() ? have.rows[i] : "(no row)";
      if (w != h)
        return "section " + name + " (" + std::to_string(want.rows.size()) + " rows expected, " +
               std::to_string(have.rows.size()) + " received), row " + std::to_string(i + 1) +
               ":\n  expected: " + w + "\n  received: " + h;
    }
  }
  return "";
}

namespace {

std::string param_text(const std::string& p) {
  if (p.size() < 2 || p[1] != ':') throw std::runtime_error("bad step parameter " + p);
  return p.substr(2);
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

}  // namespace

Sections run_libpqxx(const std::string& conninfo, const std::vector<Step>& steps) {
  pqxx::connection conn(conninfo);
  Sections out;
  for (const auto& step : steps) {
    Section& section = out[step.name];
    try {
      pqxx::result r;
      if (step.kind == "query") {
        pqxx::nontransaction tx(conn);
        r = tx.exec(step.sql);
      } else if (step.kind == "prepared") {
        std::vector<std::string> values;
        for (const auto& p : step.params) values.push_back(param_text(p));
        conn.prepare(step.name, step.sql);
        pqxx::nontransaction tx(conn);
        r = tx.exec_prepared(step.name, pqxx::prepare::make_dynamic_params(values));
      } else {
        throw std::runtime_error("libpqxx client: unsupported step " + step.kind);
      }
      for (const auto& row : r) {
        std::string line;
        for (pqxx::row::size_type i = 0; i < row.size(); ++i) {
          if (i > 0) line += '\t';
          line += row[i].is_null() ? std::string("\\N") : std::string(row[i].c_str());
        }
        section.rows.push_back(line);
      }
    } catch (const pqxx::sql_error& e) {
      section.error = e.sqlstate() + " " + first_line(e.what());
    }
  }
  return out;
}

}  // namespace kanon::testing
