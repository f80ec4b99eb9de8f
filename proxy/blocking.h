// run_blocking: runs `f` on the blocking pool and resumes the calling
// coroutine on its own executor with f's result (or exception). I/O threads
// never wait on the database themselves.
#pragma once

// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <optional>
#include <type_traits>

namespace kanon::proxy {

template <class F, class R = std::invoke_result_t<F>>
boost::asio::awaitable<R> run_blocking(boost::asio::thread_pool& pool, F f) {
  namespace asio = boost::asio;
  const auto ex = co_await asio::this_coro::executor;
  // The timer never fires: the pool cancels it when the work is done. The
  // coroutine frame (and so everything captured by reference) stays alive
  // until then, because only that cancel resumes it.
  asio::steady_timer done(ex, asio::steady_timer::time_point::max());
  std::optional<R> result;
  std::exception_ptr error;
  asio::post(pool, [&] {
    try {
      result.emplace(f());
    } catch (...) {
      error = std::current_exception();
    }
    asio::post(ex, [&] { done.cancel(); });
  });
  boost::system::error_code ec;
  co_await done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (error) std::rethrow_exception(error);
  co_return std::move(*result);
}

}  // namespace kanon::proxy
