#include "proxy/result_set.h"

#include "proxy/wire/backend_messages.h"

namespace kanon::proxy {

namespace {
constexpr uint32_t kTextOid = 25;
}

void encode(const ResultSet& result, wire::Buffer& out) {
  wire::RowDescription description;
  for (const auto& name : result.columns) {
    wire::FieldDescription field;
    field.name = name;
    field.type_oid = kTextOid;
    field.type_size = -1;
    description.fields.push_back(std::move(field));
  }
  wire::encode(description, out);
  for (const auto& row : result.rows) {
    wire::DataRow data;
    for (const auto& cell : row) {
      if (cell)
        data.columns.emplace_back(std::vector<uint8_t>(cell->begin(), cell->end()));
      else
        data.columns.emplace_back(std::nullopt);
    }
    wire::encode(data, out);
  }
  wire::encode(wire::CommandComplete{result.tag.empty() ? "SHOW" : result.tag}, out);
}

}  // namespace kanon::proxy
