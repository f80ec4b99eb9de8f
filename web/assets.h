// The web console's page, script and style sheet, compiled into kanon
// (web/assets/, embedded by embed_assets.cmake) so it works on a closed
// network: nothing is loaded from anywhere else.
#pragma once

#include <optional>
#include <string_view>

namespace kanon::web {

struct Asset {
  std::string_view content_type;
  std::string_view body;
};

// `name` as under web/assets/ ("index.html", "app.js"); nullopt otherwise.
std::optional<Asset> find_asset(std::string_view name);

}  // namespace kanon::web
