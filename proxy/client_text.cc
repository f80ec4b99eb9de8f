#include "proxy/client_text.h"

#include <fmt/format.h>
#include <iconv.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace kanon::proxy {
namespace {

using S = EncodingSupport;

// PostgreSQL 15's encodings (src/include/mb/pg_wchar.h), canonical names.
constexpr std::array kEncodings = {
    ClientEncoding{"SQL_ASCII", S::kSqlAscii},
    ClientEncoding{"UTF8", S::kUtf8},
    ClientEncoding{"LATIN1", S::kConverted, "ISO-8859-1", true},
    ClientEncoding{"LATIN2", S::kConverted, "ISO-8859-2", true},
    ClientEncoding{"LATIN3", S::kConverted, "ISO-8859-3", true},
    ClientEncoding{"LATIN4", S::kConverted, "ISO-8859-4", true},
    ClientEncoding{"LATIN5", S::kConverted, "ISO-8859-9", true},
    ClientEncoding{"LATIN6", S::kConverted, "ISO-8859-10", true},
    ClientEncoding{"LATIN7", S::kConverted, "ISO-8859-13", true},
    ClientEncoding{"LATIN8", S::kConverted, "ISO-8859-14", true},
    ClientEncoding{"LATIN9", S::kConverted, "ISO-8859-15", true},
    ClientEncoding{"LATIN10", S::kConverted, "ISO-8859-16", true},
    ClientEncoding{"ISO_8859_5", S::kConverted, "ISO-8859-5", true},
    ClientEncoding{"ISO_8859_6", S::kConverted, "ISO-8859-6", true},
    ClientEncoding{"ISO_8859_7", S::kConverted, "ISO-8859-7", true},
    ClientEncoding{"ISO_8859_8", S::kConverted, "ISO-8859-8", true},
    ClientEncoding{"WIN866", S::kConverted, "CP866", true},
    ClientEncoding{"WIN874", S::kConverted, "CP874", true},
    ClientEncoding{"WIN1250", S::kConverted, "CP1250", true},
    ClientEncoding{"WIN1251", S::kConverted, "CP1251", true},
    ClientEncoding{"WIN1252", S::kConverted, "CP1252", true},
    ClientEncoding{"WIN1253", S::kConverted, "CP1253", true},
    ClientEncoding{"WIN1254", S::kConverted, "CP1254", true},
    ClientEncoding{"WIN1255", S::kConverted, "CP1255", true},
    ClientEncoding{"WIN1256", S::kConverted, "CP1256", true},
    ClientEncoding{"WIN1257", S::kConverted, "CP1257", true},
    ClientEncoding{"WIN1258", S::kConverted, "CP1258", true},
    ClientEncoding{"KOI8R", S::kConverted, "KOI8-R", true},
    ClientEncoding{"KOI8U", S::kConverted, "KOI8-U", true},
    // glibc's EUC-JP maps seven characters (0xA1C1 WAVE DASH, ...) to other
    // code points than PostgreSQL; EUC-JP-MS maps every one alike.
    ClientEncoding{"EUC_JP", S::kConverted, "EUC-JP-MS"},
    ClientEncoding{"EUC_CN", S::kConverted, "EUC-CN"},
    ClientEncoding{"EUC_KR", S::kConverted, "EUC-KR"},
    ClientEncoding{"EUC_TW", S::kConverted, "EUC-TW"},
    // glibc's EUC-JISX0213 maps 0xA1B1 and 0xA1EF differently and composes.
    ClientEncoding{"EUC_JIS_2004", S::kAsciiOnly},
    ClientEncoding{"MULE_INTERNAL", S::kAsciiOnly},
    // Client-only encodings: a trailing byte can be '\\' (or '[', '|', ...).
    ClientEncoding{"SJIS", S::kAsciiOnly},
    ClientEncoding{"SHIFT_JIS_2004", S::kAsciiOnly},
    ClientEncoding{"BIG5", S::kAsciiOnly},
    ClientEncoding{"GBK", S::kAsciiOnly},
    ClientEncoding{"UHC", S::kAsciiOnly},
    ClientEncoding{"GB18030", S::kAsciiOnly},
    ClientEncoding{"JOHAB", S::kAsciiOnly},
};

// PostgreSQL 15's pg_encname_tbl (src/common/encnames.c): the cleaned name
// (lower case, letters and digits only) and the canonical one.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"abc", "WIN1258"},
    {"alt", "WIN866"},
    {"big5", "BIG5"},
    {"euccn", "EUC_CN"},
    {"eucjis2004", "EUC_JIS_2004"},
    {"eucjp", "EUC_JP"},
    {"euckr", "EUC_KR"},
    {"euctw", "EUC_TW"},
    {"gb18030", "GB18030"},
    {"gbk", "GBK"},
    {"iso88591", "LATIN1"},
    {"iso885910", "LATIN6"},
    {"iso885913", "LATIN7"},
    {"iso885914", "LATIN8"},
    {"iso885915", "LATIN9"},
    {"iso885916", "LATIN10"},
    {"iso88592", "LATIN2"},
    {"iso88593", "LATIN3"},
    {"iso88594", "LATIN4"},
    {"iso88595", "ISO_8859_5"},
    {"iso88596", "ISO_8859_6"},
    {"iso88597", "ISO_8859_7"},
    {"iso88598", "ISO_8859_8"},
    {"iso88599", "LATIN5"},
    {"johab", "JOHAB"},
    {"koi8", "KOI8R"},
    {"koi8r", "KOI8R"},
    {"koi8u", "KOI8U"},
    {"latin1", "LATIN1"},
    {"latin10", "LATIN10"},
    {"latin2", "LATIN2"},
    {"latin3", "LATIN3"},
    {"latin4", "LATIN4"},
    {"latin5", "LATIN5"},
    {"latin6", "LATIN6"},
    {"latin7", "LATIN7"},
    {"latin8", "LATIN8"},
    {"latin9", "LATIN9"},
    {"mskanji", "SJIS"},
    {"muleinternal", "MULE_INTERNAL"},
    {"shiftjis", "SJIS"},
    {"shiftjis2004", "SHIFT_JIS_2004"},
    {"sjis", "SJIS"},
    {"sqlascii", "SQL_ASCII"},
    {"tcvn", "WIN1258"},
    {"tcvn5712", "WIN1258"},
    {"uhc", "UHC"},
    {"unicode", "UTF8"},
    {"utf8", "UTF8"},
    {"vscii", "WIN1258"},
    {"win", "WIN1251"},
    {"win1250", "WIN1250"},
    {"win1251", "WIN1251"},
    {"win1252", "WIN1252"},
    {"win1253", "WIN1253"},
    {"win1254", "WIN1254"},
    {"win1255", "WIN1255"},
    {"win1256", "WIN1256"},
    {"win1257", "WIN1257"},
    {"win1258", "WIN1258"},
    {"win866", "WIN866"},
    {"win874", "WIN874"},
    {"win932", "SJIS"},
    {"win936", "GBK"},
    {"win949", "UHC"},
    {"win950", "BIG5"},
    {"windows1250", "WIN1250"},
    {"windows1251", "WIN1251"},
    {"windows1252", "WIN1252"},
    {"windows1253", "WIN1253"},
    {"windows1254", "WIN1254"},
    {"windows1255", "WIN1255"},
    {"windows1256", "WIN1256"},
    {"windows1257", "WIN1257"},
    {"windows1258", "WIN1258"},
    {"windows866", "WIN866"},
    {"windows874", "WIN874"},
    {"windows932", "SJIS"},
    {"windows936", "GBK"},
    {"windows949", "UHC"},
    {"windows950", "BIG5"},
};

// The length of the UTF-8 character starting at s[0] when it is well formed
// (pg_utf8_islegal's rules), else 0.
size_t utf8_char_length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// One iconv descriptor, closed with its owner.
class Iconv {
 public:
  Iconv(const char* to, const char* from) : cd_(iconv_open(to, from)) {}
  ~Iconv() {
    if (ok()) iconv_close(cd_);
  }
  Iconv(const Iconv&) = delete;
  Iconv& operator=(const Iconv&) = delete;
  bool ok() const { return cd_ != reinterpret_cast<iconv_t>(-1); }

  // The whole of `in`, the shift state flushed; nullopt on an invalid or
  // incomplete sequence or a character the target lacks.
  std::optional<std::string> convert(std::string_view in) {
    if (!ok()) return std::nullopt;
    iconv(cd_, nullptr, nullptr, nullptr, nullptr);
    std::string out(in.size() * 2 + 16, '\0');
    char* ip = const_cast<char*>(in.data());
    size_t il = in.size();
    size_t written = 0;
    bool flushing = false;
    for (;;) {
      char* op = out.data() + written;
      size_t ol = out.size() - written;
      const size_t r =
          flushing ? iconv(cd_, nullptr, nullptr, &op, &ol) : iconv(cd_, &ip, &il, &op, &ol);
      written = static_cast<size_t>(op - out.data());
      if (r == static_cast<size_t>(-1)) {
        if (errno != E2BIG) return std::nullopt;
        out.resize(out.size() * 2);
        continue;
      }
      if (flushing) break;
      flushing = true;
    }
    out.resize(written);
    return out;
  }

 private:
  iconv_t cd_;
};

// This thread's descriptor for `from` -> `to` (iconv_t is not thread-safe).
Iconv& descriptor(const char* to, const char* from) {
  thread_local std::map<std::pair<std::string, std::string>, std::unique_ptr<Iconv>> cache;
  auto& slot = cache[{to, from}];
  if (!slot) slot = std::make_unique<Iconv>(to, from);
  return *slot;
}

// A single-byte encoding's bytes 0x80..0xFF as UTF-8 and back, each byte
// converted alone (glibc composes CP1255 and CP1258 marks with the letter
// before them; PostgreSQL converts byte by byte).
struct ByteTable {
  std::array<std::string, 128> high;              // empty: the byte is undefined
  std::unordered_map<std::string, char> reverse;  // a character's UTF-8 -> its byte
};

const ByteTable& byte_table(const ClientEncoding& e) {
  // Built once per process, then found without the lock by each thread.
  thread_local std::map<std::string_view, const ByteTable*> seen;
  if (const auto it = seen.find(e.name); it != seen.end()) return *it->second;
  static std::mutex mu;
  static std::map<std::string_view, std::unique_ptr<const ByteTable>> tables;
  std::lock_guard lock(mu);
  auto& t = tables[e.name];
  if (!t) {
    auto built = std::make_unique<ByteTable>();
    Iconv cd("UTF-8", e.iconv);
    for (int b = 0x80; b <= 0xFF; ++b) {
      const char byte = static_cast<char>(b);
      auto u = cd.convert(std::string_view(&byte, 1));
      if (!u || u->empty() || !is_valid_utf8(*u)) continue;
      built->reverse.emplace(*u, byte);
      built->high[b - 0x80] = std::move(*u);
    }
    t = std::move(built);
  }
  seen.emplace(e.name, t.get());
  return *t;
}

}  // namespace

std::optional<ClientEncoding> find_encoding(std::string_view name) {
  std::string key;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z')
      key += static_cast<char>(c - 'A' + 'a');
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
      key += c;
  }
  for (const auto& [alias, canonical] : kAliases) {
    if (alias != key) continue;
    for (const auto& e : kEncodings)
      if (e.name == canonical) return e;
  }
  return std::nullopt;
}

std::span<const ClientEncoding> client_encodings() {
  return kEncodings;
}

bool is_ascii(std::string_view text) {
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    if (w & 0x8080808080808080ULL) return false;
  }
  for (; i < text.size(); ++i)
    if (static_cast<unsigned char>(text[i]) >= 0x80) return false;
  return true;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = utf8_char_length(text.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::optional<std::string> to_utf8(std::string_view text, const ClientEncoding& e) {
  if (e.support != EncodingSupport::kConverted) return std::nullopt;
  if (!e.single_byte) return descriptor("UTF-8", e.iconv).convert(text);
  const ByteTable& t = byte_table(e);
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x80) {
      out += c;
      continue;
    }
    const std::string& u = t.high[b - 0x80];
    if (u.empty()) return std::nullopt;
    out += u;
  }
  return out;
}

std::optional<std::string> from_utf8(std::string_view utf8, const ClientEncoding& e) {
  if (e.support != EncodingSupport::kConverted || !is_valid_utf8(utf8)) return std::nullopt;
  if (!e.single_byte) return descriptor(e.iconv, "UTF-8").convert(utf8);
  const ByteTable& t = byte_table(e);
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    const size_t n = utf8_char_length(utf8.substr(i));
    if (n == 1) {
      out += utf8[i++];
      continue;
    }
    const auto it = t.reverse.find(std::string(utf8.substr(i, n)));
    if (it == t.reverse.end()) return std::nullopt;
    out += it->second;
    i += n;
  }
  return out;
}

std::string from_utf8_lossy(std::string_view utf8, const ClientEncoding& e) {
  if (e.support == EncodingSupport::kUtf8 || e.support == EncodingSupport::kSqlAscii)
    return std::string(utf8);
  if (e.support == EncodingSupport::kConverted)
    if (auto whole = from_utf8(utf8, e)) return std::move(*whole);
  std::string out;
  for (size_t i = 0; i < utf8.size();) {
    const size_t n = std::max<size_t>(utf8_char_length(utf8.substr(i)), 1);
    const std::string_view ch = utf8.substr(i, n);
    i += n;
    if (n == 1 && static_cast<unsigned char>(ch[0]) < 0x80) {
      out += ch;
      continue;
    }
    std::optional<std::string> one;
    if (e.support == EncodingSupport::kConverted) one = from_utf8(ch, e);
    out += one ? *one : std::string("?");
  }
  return out;
}

std::string printable_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = utf8_char_length(bytes.substr(i));
    if (n > 0) {
      out += bytes.substr(i, n);
      i += n;
      continue;
    }
    out += fmt::format("\\x{:02X}", static_cast<unsigned char>(bytes[i]));
    ++i;
  }
  return out;
}

}  // namespace kanon::proxy
