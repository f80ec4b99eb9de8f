#include "proxy/listener.h"

#include <fmt/format.h>

#include <stdexcept>

namespace kanon::proxy {

void open_listener(boost::asio::ip::tcp::acceptor& acceptor, const settings::Endpoint& listen,
                   std::string_view what) {
  using tcp = boost::asio::ip::tcp;
  boost::system::error_code ec;
  tcp::resolver resolver(acceptor.get_executor());
  const auto results = resolver.resolve(listen.host, std::to_string(listen.port), ec);
  if (!ec && results.empty()) ec = boost::asio::error::host_not_found;
  if (!ec) {
    const tcp::endpoint endpoint = results.begin()->endpoint();
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  }
  if (ec)
    throw std::runtime_error(fmt::format("{}: cannot listen on {}:{}: {}", what, listen.host,
                                         listen.port, ec.message()));
}

}  // namespace kanon::proxy
