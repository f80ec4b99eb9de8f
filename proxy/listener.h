// open_listener: binds an acceptor to a configured address (resolved, with
// SO_REUSEADDR) and listens — the proxy's port, the metrics endpoint and the
// web console. Throws std::runtime_error "<what>: cannot listen on
// host:port: <reason>".
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string_view>

#include "settings/server_config.h"

namespace kanon::proxy {

void open_listener(boost::asio::ip::tcp::acceptor& acceptor, const settings::Endpoint& listen,
                   std::string_view what);

}  // namespace kanon::proxy
