#include "proxy/console_session.h"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/sqlstate.h"
#include "proxy/admin_console.h"
#include "proxy/blocking.h"
#include "proxy/log.h"
#include "proxy/wire/authentication.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/message_types.h"

namespace kanon::proxy {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

// Reads until `buffer` holds one whole typed frame and returns it (still
// pending: the caller consumes it). Throws on a closed connection; a
// malformed frame is returned as such.
awaitable<wire::Frame> read_frame(ByteStream& stream, ReceiveBuffer& buffer, uint32_t max) {
  for (;;) {
    const wire::Frame frame = wire::frame_typed(buffer.pending(), max);
    if (frame.status != wire::FrameStatus::kNeedMore) co_return frame;
    buffer.commit(co_await stream.read_some(buffer.prepare()));
  }
}

bool needs_client_answer(wire::AuthCode code) {
  switch (code) {
    case wire::AuthCode::kCleartextPassword:
    case wire::AuthCode::kMd5Password:
    case wire::AuthCode::kSasl:
    case wire::AuthCode::kSaslContinue:
    case wire::AuthCode::kGss:
    case wire::AuthCode::kGssContinue:
    case wire::AuthCode::kSspi:
      return true;
    default:
      return false;
  }
}

}  // namespace

ConsoleSession::ConsoleSession(ServerContext& context, ByteStream& client,
                               ReceiveBuffer& from_client)
    : context_(context),
      runtime_(context.runtime()),
      client_(client),
      from_client_(from_client),
      backend_stream_(context.cancels) {}

ConsoleSession::~ConsoleSession() {
  if (key_) context_.cancels.remove(*key_);
}

awaitable<bool> ConsoleSession::authenticate(wire::StartupMessage startup, ByteStream& backend) {
  const auto& config = *runtime_->config;
  for (auto& [name, value] : startup.parameters)
    if (name == "database") value = config.admin.auth_database;
  if (!startup.find("database"))
    startup.parameters.emplace_back("database", config.admin.auth_database);
  wire::Buffer packet;
  wire::encode(startup, packet);
  co_await backend.write(asio::buffer(packet));
  const uint32_t max = config.limits.max_message_size;
  for (;;) {
    const wire::Frame frame = co_await read_frame(backend, from_backend_, max);
    if (frame.status == wire::FrameStatus::kMalformed) co_return false;
    if (frame.type == wire::backend::kBackendKeyData) {
      // The backend connection ends after the login: the client gets a key
      // whose CancelRequest cancels the running console command instead.
      key_ = context_.cancels.add_local(cancel_);
      wire::Buffer key;
      wire::encode(*key_, key);
      co_await client_.write(asio::buffer(key));
      from_backend_.consume(frame.size);
      continue;
    }
    const auto verdict = backend_stream_.on_frame(frame);
    if (verdict == BackendStream::Verdict::kMalformed) co_return false;
    if (verdict == BackendStream::Verdict::kReplace)
      co_await client_.write(asio::buffer(backend_stream_.replacement()));
    else
      co_await client_.write(asio::buffer(from_backend_.pending().data(), frame.size));
    const char type = frame.type;
    std::optional<wire::AuthCode> code;
    if (type == wire::backend::kAuthentication) {
      auto auth = wire::decode_authentication(frame.body);
      if (auth.ok()) code = auth.value().code;
    }
    from_backend_.consume(frame.size);
    if (type == wire::backend::kErrorResponse) co_return false;
    if (type == wire::backend::kReadyForQuery) break;
    if (code && needs_client_answer(*code)) {
      const wire::Frame answer = co_await read_frame(client_, from_client_, max);
      if (answer.status == wire::FrameStatus::kMalformed ||
          answer.type != wire::frontend::kPasswordMessage) {
        co_await send_fatal(sqlstate::kProtocolViolation,
                            "expected a password message during authentication");
        co_return false;
      }
      co_await backend.write(asio::buffer(from_client_.pending().data(), answer.size));
      from_client_.consume(answer.size);
    }
  }
  static constexpr uint8_t kTerminate[] = {wire::frontend::kTerminate, 0, 0, 0, 4};
  boost::system::error_code ec;
  co_await backend.write(asio::buffer(kTerminate), ec);
  co_return true;
}

awaitable<void> ConsoleSession::serve(const bool& stopping) {
  AdminConsole console(context_);
  const uint32_t max = runtime_->config->limits.max_message_size;
  bool failed_in_cycle = false;  // extended protocol: discard until Sync
  for (;;) {
    if (stopping) {
      co_await send_fatal(sqlstate::kAdminShutdown,
                          "terminating connection because kanon is shutting down");
      co_return;
    }
    boost::system::error_code ec;
    wire::Frame frame;
    for (;;) {
      frame = wire::frame_typed(from_client_.pending(), max);
      if (frame.status != wire::FrameStatus::kNeedMore) break;
      const size_t n = co_await client_.read_some(from_client_.prepare(), ec);
      if (ec) {
        if (stopping) break;
        co_return;
      }
      from_client_.commit(n);
    }
    if (stopping) continue;
    if (frame.status == wire::FrameStatus::kMalformed) {
      co_await send_fatal(sqlstate::kProtocolViolation,
                          fmt::format("invalid message from the client: {}", frame.error));
      co_return;
    }
    wire::Buffer out;
    const char type = frame.type;
    if (type == wire::frontend::kTerminate) co_return;
    if (type == wire::frontend::kQuery) {
      auto query = wire::decode_query(frame.body);
      from_client_.consume(frame.size);
      if (!query.ok()) {
        wire::encode_error(out, "ERROR", sqlstate::kProtocolViolation, "invalid Query message");
      } else {
        out = co_await run_command(console, query.value().sql);
      }
      wire::encode(wire::ReadyForQuery{wire::kTxIdle}, out);
    } else if (type == wire::frontend::kSync) {
      from_client_.consume(frame.size);
      failed_in_cycle = false;
      wire::encode(wire::ReadyForQuery{wire::kTxIdle}, out);
    } else {
      from_client_.consume(frame.size);
      if (!failed_in_cycle && type != wire::frontend::kFlush)
        wire::encode_error(out, "ERROR", sqlstate::kFeatureNotSupported,
                           "kanon admin: the console speaks the simple query protocol only");
      failed_in_cycle = true;
    }
    if (!out.empty()) co_await client_.write(asio::buffer(out));
  }
}

awaitable<wire::Buffer> ConsoleSession::run_command(AdminConsole& console, std::string sql) {
  // The command runs on the blocking pool; meanwhile this coroutine is the
  // only writer to the client and forwards the command's notices every
  // 200 ms. A CancelRequest sets the session's flag through key_, which is
  // the channel's: the command sees it at once.
  cancel_->store(false);
  ConsoleChannel channel(cancel_);
  const auto ex = client_.socket().get_executor();
  asio::steady_timer tick(ex);
  bool finished = false;
  wire::Buffer answer;
  asio::post(context_.blocking, [&] {
    console.execute(sql, answer, channel);
    asio::post(ex, [&] {
      finished = true;
      tick.cancel();
    });
  });
  while (!finished) {
    tick.expires_after(std::chrono::milliseconds(200));
    boost::system::error_code ec;
    co_await tick.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    const wire::Buffer notices = channel.take_notices();
    if (!notices.empty()) {
      co_await client_.write(asio::buffer(notices), ec);
      if (ec) cancel_->store(true);  // the client went away: stop the command
    }
  }
  wire::Buffer out = channel.take_notices();
  out.insert(out.end(), answer.begin(), answer.end());
  co_return out;
}

awaitable<void> ConsoleSession::send_fatal(std::string_view sqlstate, std::string_view message) {
  wire::Buffer out;
  wire::encode_error(out, "FATAL", sqlstate, message);
  boost::system::error_code ec;
  co_await client_.write(asio::buffer(out), ec);
}

}  // namespace kanon::proxy
