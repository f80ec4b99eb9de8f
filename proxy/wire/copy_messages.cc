#include "proxy/wire/copy_messages.h"

namespace kanon::wire {
namespace {

template <class T>
Result<T> decode_copy_response(Bytes body, std::string_view name) {
  ByteReader r(body);
  T m;
  if (!r.read_i8(m.format)) return wire_error(name, "message ends before the overall format");
  if (m.format != 0 && m.format != 1)
    return wire_error(name, "overall format is ", m.format, "; only 0 (text) and 1 (binary) exist");
  if (auto e = read_format_codes(r, m.column_formats, name, "column format code")) return *e;
  if (!r.at_end()) return trailing_bytes(name, r.remaining());
  if (m.format == 0) {
    for (size_t i = 0; i < m.column_formats.size(); ++i)
      if (m.column_formats[i] != kFormatText)
        return wire_error(name, "column ", i + 1, " is binary in a text-format COPY");
  }
  return m;
}

template <class T>
void encode_copy_response(const T& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(T::kType);
  w.write_i8(m.format);
  write_format_codes(w, m.column_formats);
  w.end_message();
}

}  // namespace

Result<CopyData> decode_copy_data(Bytes body) {
  return CopyData{{body.begin(), body.end()}};
}

Result<CopyDone> decode_copy_done(Bytes body) {
  return decode_empty<CopyDone>(body, "CopyDone");
}

Result<CopyFail> decode_copy_fail(Bytes body) {
  ByteReader r(body);
  CopyFail m;
  if (!r.read_cstring(m.message)) return WireError{"CopyFail: error message is not NUL-terminated"};
  if (!r.at_end()) return trailing_bytes("CopyFail", r.remaining());
  return m;
}

Result<CopyInResponse> decode_copy_in_response(Bytes body) {
  return decode_copy_response<CopyInResponse>(body, "CopyInResponse");
}
Result<CopyOutResponse> decode_copy_out_response(Bytes body) {
  return decode_copy_response<CopyOutResponse>(body, "CopyOutResponse");
}
Result<CopyBothResponse> decode_copy_both_response(Bytes body) {
  return decode_copy_response<CopyBothResponse>(body, "CopyBothResponse");
}

void encode(const CopyData& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(CopyData::kType);
  w.write_bytes(m.data);
  w.end_message();
}

void encode(const CopyDone&, Buffer& out) {
  encode_empty(CopyDone::kType, out);
}

void encode(const CopyFail& m, Buffer& out) {
  ByteWriter w(out);
  w.begin_message(CopyFail::kType);
  w.write_cstring(m.message);
  w.end_message();
}

void encode(const CopyInResponse& m, Buffer& out) {
  encode_copy_response(m, out);
}
void encode(const CopyOutResponse& m, Buffer& out) {
  encode_copy_response(m, out);
}
void encode(const CopyBothResponse& m, Buffer& out) {
  encode_copy_response(m, out);
}

}  // namespace kanon::wire
