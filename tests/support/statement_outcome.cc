#include "tests/support/statement_outcome.h"

namespace kanon::testing {

std::string render(const pqxx::result& r) {
  std::string out;
  for (const auto& row : r) {
    for (const auto& f : row) out += (f.is_null() ? std::string("<null>") : f.c_str()) + "|";
    out += "\n";
  }
  return out;
}

Outcome run(pqxx::connection& c, const std::string& sql, bool extended) {
  Outcome o;
  try {
    pqxx::nontransaction tx(c);
    o.rows = render(extended ? tx.exec_params(sql) : tx.exec(sql));
  } catch (const pqxx::insufficient_privilege& e) {
    o.sqlstate = "42501";  // libpqxx 6 does not keep the SQLSTATE of this class
    o.message = e.what();
  } catch (const pqxx::sql_error& e) {
    o.sqlstate = e.sqlstate();
    o.message = e.what();
  } catch (const pqxx::serialization_failure& e) {
    o.sqlstate = "40001";  // libpqxx 6 keeps no SQLSTATE for this class either
    o.message = e.what();
  }
  return o;
}

}  // namespace kanon::testing
