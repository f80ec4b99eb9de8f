#include "proxy/backend_stream.h"

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
    case wire::backend::kReadyForQuery:
      phase_ = Phase::kReady;
      return Verdict::kForward;
    default:
      return Verdict::kForward;
  }
}

}  // namespace kanon::proxy
