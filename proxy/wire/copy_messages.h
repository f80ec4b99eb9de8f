// The COPY sub-protocol: CopyData and CopyDone travel in both directions,
// CopyFail from the frontend, Copy{In,Out,Both}Response from the backend.
//
// decode_xxx() takes a frame body (after type and length); encode() appends
// the whole frame.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proxy/wire/field_codec.h"
#include "proxy/wire/framing.h"
#include "proxy/wire/message_types.h"
#include "proxy/wire/wire_result.h"

namespace kanon::wire {

struct CopyData {
  static constexpr char kType = frontend::kCopyData;
  std::vector<uint8_t> data;
  bool operator==(const CopyData&) const = default;
};

struct CopyDone {
  static constexpr char kType = frontend::kCopyDone;
  bool operator==(const CopyDone&) const = default;
};

struct CopyFail {
  static constexpr char kType = frontend::kCopyFail;
  std::string message;
  bool operator==(const CopyFail&) const = default;
};

// The three responses share one layout: the overall format (0 text, 1
// binary) and one format code per column. Decoding checks that the codes are
// 0 or 1 and that a text COPY has only text columns.
struct CopyInResponse {
  static constexpr char kType = backend::kCopyInResponse;
  int8_t format = 0;
  std::vector<int16_t> column_formats;
  bool operator==(const CopyInResponse&) const = default;
};

struct CopyOutResponse {
  static constexpr char kType = backend::kCopyOutResponse;
  int8_t format = 0;
  std::vector<int16_t> column_formats;
  bool operator==(const CopyOutResponse&) const = default;
};

struct CopyBothResponse {
  static constexpr char kType = backend::kCopyBothResponse;
  int8_t format = 0;
  std::vector<int16_t> column_formats;
  bool operator==(const CopyBothResponse&) const = default;
};

Result<CopyData> decode_copy_data(Bytes body);
Result<CopyDone> decode_copy_done(Bytes body);
Result<CopyFail> decode_copy_fail(Bytes body);
Result<CopyInResponse> decode_copy_in_response(Bytes body);
Result<CopyOutResponse> decode_copy_out_response(Bytes body);
Result<CopyBothResponse> decode_copy_both_response(Bytes body);

void encode(const CopyData& m, Buffer& out);
void encode(const CopyDone& m, Buffer& out);
void encode(const CopyFail& m, Buffer& out);
void encode(const CopyInResponse& m, Buffer& out);
void encode(const CopyOutResponse& m, Buffer& out);
void encode(const CopyBothResponse& m, Buffer& out);

}  // namespace kanon::wire
