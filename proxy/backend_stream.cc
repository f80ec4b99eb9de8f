#include "proxy/backend_stream.h"

#include <algorithm>

#include "proxy/wire/authentication.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/message_types.h"

namespace kanon::proxy {

BackendStream::~BackendStream() {
  if (client_key_) registry_.remove(*client_key_);
}

BackendStream::Verdict BackendStream::on_frame(const wire::Frame& frame) {
  switch (frame.type) {
    case wire::backend::kErrorResponse: {
      auto error = wire::decode_error_response(frame.body);
      if (!error.ok()) return Verdict::kMalformed;
      const auto severity = error.value().field('V');
      if (severity == "FATAL" || severity == "PANIC") fatal_ = true;
      return Verdict::kForward;
    }
    case wire::backend::kBackendKeyData: {
      if (phase_ != Phase::kStartup || backend_key_) return Verdict::kMalformed;
      auto key = wire::decode_backend_key_data(frame.body);
      if (!key.ok()) return Verdict::kMalformed;
      backend_key_ = key.value();
      client_key_ = registry_.add(*backend_key_);
      replacement_.clear();
      wire::encode(*client_key_, replacement_);
      return Verdict::kReplace;
    }
    case wire::backend::kAuthentication: {
      if (phase_ != Phase::kStartup) return Verdict::kMalformed;
      auto auth = wire::decode_authentication(frame.body);
      if (!auth.ok()) return Verdict::kMalformed;
      auto& mechanisms = auth.value().mechanisms;
      if (auth.value().code != wire::AuthCode::kSasl) return Verdict::kForward;
      // Channel binding ties SCRAM to the TLS connection the server sees;
      // kanon ends the client's TLS, so the binding could never verify.
      // Without the -PLUS mechanism libpq's channel_binding=prefer falls
      // back to plain SCRAM.
      const auto plus = std::remove_if(mechanisms.begin(), mechanisms.end(), [](const auto& m) {
        return m.size() > 5 && m.compare(m.size() - 5, 5, "-PLUS") == 0;
      });
      if (plus == mechanisms.end()) return Verdict::kForward;
      mechanisms.erase(plus, mechanisms.end());
      if (mechanisms.empty()) return Verdict::kMalformed;
      replacement_.clear();
      wire::encode(auth.value(), replacement_);
      return Verdict::kReplace;
    }
    case wire::backend::kParameterStatus: {
      auto status = wire::decode_parameter_status(frame.body);
      if (!status.ok()) return Verdict::kMalformed;
      const auto& name = status.value().name;
      if (name == "standard_conforming_strings")
        standard_conforming_strings_ = status.value().value == "on";
      else if (name == "client_encoding")
        client_encoding_ = status.value().value;
      else if (name == "server_encoding")
        server_encoding_ = status.value().value;
      return Verdict::kForward;
    }
    case wire::backend::kReadyForQuery:
      if (frame.body.size() != 1) return Verdict::kMalformed;
      if (phase_ == Phase::kStartup) startup_client_encoding_ = client_encoding_;
      phase_ = Phase::kReady;
      transaction_status_ = static_cast<char>(frame.body[0]);
      ++ready_count_;
      if (transaction_status_ == wire::kTxIdle) last_idle_ready_ = ready_count_;
      return Verdict::kForward;
    default:
      return Verdict::kForward;
  }
}

}  // namespace kanon::proxy
