// Message type codes and special request codes of the PostgreSQL
// frontend/backend protocol, version 3.0, named as PostgreSQL names them.
#pragma once

#include <cstdint>

namespace kanon::wire {

// The first byte of a typed message. Several codes mean different things in
// the two directions, so the names carry the direction.
namespace frontend {
inline constexpr char kQuery = 'Q';
inline constexpr char kParse = 'P';
inline constexpr char kBind = 'B';
inline constexpr char kDescribe = 'D';
inline constexpr char kExecute = 'E';
inline constexpr char kSync = 'S';
inline constexpr char kFlush = 'H';
inline constexpr char kClose = 'C';
inline constexpr char kCopyData = 'd';
inline constexpr char kCopyDone = 'c';
inline constexpr char kCopyFail = 'f';
inline constexpr char kFunctionCall = 'F';
inline constexpr char kTerminate = 'X';
// PasswordMessage, SASLInitialResponse, SASLResponse and GSSResponse share 'p'.
inline constexpr char kPasswordMessage = 'p';
}  // namespace frontend

namespace backend {
inline constexpr char kAuthentication = 'R';
inline constexpr char kParameterStatus = 'S';
inline constexpr char kBackendKeyData = 'K';
inline constexpr char kReadyForQuery = 'Z';
inline constexpr char kRowDescription = 'T';
inline constexpr char kDataRow = 'D';
inline constexpr char kCommandComplete = 'C';
inline constexpr char kEmptyQueryResponse = 'I';
inline constexpr char kErrorResponse = 'E';
inline constexpr char kNoticeResponse = 'N';
inline constexpr char kParseComplete = '1';
inline constexpr char kBindComplete = '2';
inline constexpr char kCloseComplete = '3';
inline constexpr char kParameterDescription = 't';
inline constexpr char kNoData = 'n';
inline constexpr char kPortalSuspended = 's';
inline constexpr char kCopyInResponse = 'G';
inline constexpr char kCopyOutResponse = 'H';
inline constexpr char kCopyBothResponse = 'W';
inline constexpr char kCopyData = 'd';
inline constexpr char kCopyDone = 'c';
inline constexpr char kNotificationResponse = 'A';
inline constexpr char kFunctionCallResponse = 'V';
inline constexpr char kNegotiateProtocolVersion = 'v';
}  // namespace backend

// Codes in the protocol-version field of untyped start-up packets.
inline constexpr uint32_t kProtocolVersion3 = 196608;  // 3.0
inline constexpr uint32_t kCancelRequestCode = 80877102;
inline constexpr uint32_t kSslRequestCode = 80877103;
inline constexpr uint32_t kGssEncRequestCode = 80877104;

// Authentication request codes carried by 'R' messages.
enum class AuthCode : uint32_t {
  kOk = 0,
  kKerberosV5 = 2,
  kCleartextPassword = 3,
  kMd5Password = 5,
  kScmCredential = 6,
  kGss = 7,
  kGssContinue = 8,
  kSspi = 9,
  kSasl = 10,
  kSaslContinue = 11,
  kSaslFinal = 12,
};

// ReadyForQuery transaction status.
inline constexpr char kTxIdle = 'I';
inline constexpr char kTxInBlock = 'T';
inline constexpr char kTxFailed = 'E';

// Extended-protocol messages the backend answers with exactly one message
// that is_extended_answer() counts, when nothing fails.
inline constexpr bool expects_answer(char frontend_type) {
  switch (frontend_type) {
    case frontend::kParse:
    case frontend::kBind:
    case frontend::kDescribe:
    case frontend::kExecute:
    case frontend::kClose:
      return true;
    default:
      return false;
  }
}

// ParseComplete, BindComplete, CloseComplete; RowDescription or NoData (the
// end of a Describe); CommandComplete, EmptyQueryResponse or PortalSuspended
// (the end of an Execute).
inline constexpr bool is_extended_answer(char backend_type) {
  switch (backend_type) {
    case backend::kParseComplete:
    case backend::kBindComplete:
    case backend::kCloseComplete:
    case backend::kRowDescription:
    case backend::kNoData:
    case backend::kCommandComplete:
    case backend::kEmptyQueryResponse:
    case backend::kPortalSuspended:
      return true;
    default:
      return false;
  }
}

}  // namespace kanon::wire
