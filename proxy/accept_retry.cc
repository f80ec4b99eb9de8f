#include "proxy/accept_retry.h"

#include <utility>

#include "proxy/log.h"

namespace kanon::proxy {

AcceptRetry::AcceptRetry(const boost::asio::any_io_executor& executor, std::string what)
    : what_(std::move(what)), timer_(executor) {}

boost::asio::steady_timer& AcceptRetry::failed(const boost::system::error_code& ec) {
  if (failures_++ == 0)
    log(LogLevel::kWarning, "{}: accept failed: {}; retrying every {} ms", what_, ec.message(),
        kRetryEvery.count());
  timer_.expires_after(kRetryEvery);
  return timer_;
}

void AcceptRetry::accepted() {
  if (failures_ == 0) return;
  log(LogLevel::kInfo, "{}: accepting again after {} failed accepts", what_, failures_);
  failures_ = 0;
}

}  // namespace kanon::proxy
