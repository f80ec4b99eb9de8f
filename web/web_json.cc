#include "web/web_json.h"

namespace kanon::web {

using base::Json;

Json result_json(const proxy::ResultSet& result) {
  Json doc;
  doc["columns"] = result.columns;
  Json rows = Json::array();
  for (const auto& row : result.rows) {
    Json r = Json::array();
    for (const auto& v : row) r.push_back(v ? Json(*v) : Json(nullptr));
    rows.push_back(std::move(r));
  }
  doc["rows"] = std::move(rows);
  doc["tag"] = result.tag.empty() ? "SHOW" : result.tag;
  return doc;
}

Json answer_json(const std::string& command, const proxy::ConsoleAnswer& answer,
                 const std::vector<std::string>& notices) {
  Json doc;
  doc["command"] = command;
  if (answer.ok()) {
    Json results = Json::array();
    for (const auto& r : answer.results) results.push_back(result_json(r));
    doc["results"] = std::move(results);
  } else {
    doc["sqlstate"] = answer.sqlstate;
    doc["error"] = answer.error;
  }
  doc["notices"] = notices;
  return doc;
}

Json job_json(const JobView& job) {
  Json doc;
  doc["id"] = job.id;
  doc["user"] = job.user;
  doc["table"] = job.table;
  doc["command"] = job.command;
  doc["state"] = to_string(job.state);
  doc["progress"] = base::json_number(job.progress, 4);
  doc["notices"] = job.notices;
  doc["result"] = job.result ? result_json(*job.result) : Json(nullptr);
  if (!job.error.empty()) {
    doc["sqlstate"] = job.sqlstate;
    doc["error"] = job.error;
  }
  return doc;
}

Json error_json(const std::string& message, const std::string& sqlstate) {
  Json doc;
  doc["error"] = message;
  if (!sqlstate.empty()) doc["sqlstate"] = sqlstate;
  return doc;
}

}  // namespace kanon::web
