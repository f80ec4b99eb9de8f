// The web console's JSON: a console answer is {"columns": [...], "rows":
// [[...]], "tag": ...} per result table (values are the console's text,
// NULL is null), so a script reads exactly what psql shows.
#pragma once

#include <string>
#include <vector>

#include "base/json.h"
#include "proxy/admin_console.h"
#include "web/export_jobs.h"

namespace kanon::web {

base::Json result_json(const proxy::ResultSet& result);
// {"command", "results": [...], "notices": [...]} or, failed,
// {"command", "sqlstate", "error", "notices"}.
base::Json answer_json(const std::string& command, const proxy::ConsoleAnswer& answer,
                       const std::vector<std::string>& notices);
base::Json job_json(const JobView& job);
base::Json error_json(const std::string& message, const std::string& sqlstate = "");

}  // namespace kanon::web
