// AcceptRetry: what an accept loop (the proxy's listener, the metrics
// endpoint, the web console) does when accepting fails, mostly for want of
// file descriptors (EMFILE, ENFILE) or memory (ENOBUFS, ENOMEM). The
// connection stays in the listen queue, so accepting again at once fails
// again at once: the loop waits kRetryEvery on a timer instead (the thread
// goes on serving) and tries again. The first failure of such an episode is
// logged, and the first accept that works after it, with the count of
// failures; never each retry. One loop's: not thread-safe.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstdint>
#include <string>

namespace kanon::proxy {

class AcceptRetry {
 public:
  static constexpr std::chrono::milliseconds kRetryEvery{100};

  // `what` names the listener in the log ("listen", "metrics.listen").
  AcceptRetry(const boost::asio::any_io_executor& executor, std::string what);

  // After a failed accept: logs the start of an episode and sets the timer
  // to expire after kRetryEvery; the loop waits on it, then accepts again
  // (an aborted wait means the loop is stopping).
  boost::asio::steady_timer& failed(const boost::system::error_code& ec);
  // After an accept that worked: logs the end of an episode, if any.
  void accepted();
  void cancel() { timer_.cancel(); }

 private:
  std::string what_;
  boost::asio::steady_timer timer_;
  uint64_t failures_ = 0;
};

}  // namespace kanon::proxy
