// Client encodings: how kanon reads a restricted session's statement text.
//
// PostgreSQL converts the text of every Query and Parse message from the
// session's client_encoding to the server encoding when the message arrives.
// kanon's parser (libpg_query) reads UTF-8, so for a session in another
// encoding kanon converts the text to UTF-8 before it decides it, and the
// rewritten text back before it sends it; the conversion must give exactly
// the characters PostgreSQL's gives, or kanon could read an identifier as
// another name than the server resolves (proxy_encoding_test compares the two
// over every character of every encoding kanon converts).
//
//   UTF8           read as it is (when valid UTF-8)
//   SQL_ASCII      PostgreSQL converts nothing: read as UTF-8 when valid
//   kConverted     ASCII-safe encodings whose every byte below 0x80 is that
//                  ASCII character and appears in no multi-byte character:
//                  LATIN1..LATIN10, ISO_8859_5..8, WIN866, WIN874,
//                  WIN1250..WIN1258, KOI8R, KOI8U (one byte a character,
//                  tables built from glibc's iconv a byte at a time, so its
//                  composition of WIN1255/WIN1258 marks never applies), and
//                  EUC_JP (iconv's EUC-JP-MS), EUC_CN, EUC_KR, EUC_TW
//   kAsciiOnly     non-ASCII text is refused: encodings that are not
//                  ASCII-safe (SJIS, SHIFT_JIS_2004, BIG5, GBK, UHC, GB18030,
//                  JOHAB: a byte of a character can be a quote or a
//                  backslash), those iconv maps differently from PostgreSQL
//                  (EUC_JIS_2004) or not at all (MULE_INTERNAL), and names
//                  PostgreSQL does not know
//
// Pure functions; the conversion state is per thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kanon::proxy {

enum class EncodingSupport { kUtf8, kSqlAscii, kConverted, kAsciiOnly };

struct ClientEncoding {
  std::string_view name;  // PostgreSQL's canonical name: "LATIN1", "UTF8", "EUC_JP"
  EncodingSupport support = EncodingSupport::kAsciiOnly;
  const char* iconv = nullptr;  // kConverted: glibc iconv's name for it
  bool single_byte = false;     // kConverted: one byte a character

  bool operator==(const ClientEncoding& o) const { return name == o.name; }
};

// The encoding PostgreSQL means by `name`: its canonical name or any alias it
// accepts, case and punctuation ignored as pg_char_to_encoding() ignores them
// ("latin1", "ISO-8859-1", "UNICODE", "win1252", "Windows-1252", ...).
// nullopt when PostgreSQL knows no such encoding.
std::optional<ClientEncoding> find_encoding(std::string_view name);

// Every encoding PostgreSQL 15 knows, canonical names only.
std::span<const ClientEncoding> client_encodings();

bool is_ascii(std::string_view text);
// Well-formed UTF-8 as PostgreSQL checks it (no overlong forms, surrogates or
// code points above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` in encoding `e` (kConverted) as UTF-8; nullopt when it does not
// convert (a byte sequence the encoding does not define).
std::optional<std::string> to_utf8(std::string_view text, const ClientEncoding& e);
// Back: UTF-8 text as encoding `e` (kConverted); nullopt when a character has
// no equivalent there or `utf8` is not valid UTF-8.
std::optional<std::string> from_utf8(std::string_view utf8, const ClientEncoding& e);
// For kanon's own messages: `utf8` in encoding `e` as far as it goes, every
// character `e` cannot hold (or every non-ASCII one, when `e` is not
// kConverted) written as '?'. UTF8 and SQL_ASCII get `utf8` unchanged.
std::string from_utf8_lossy(std::string_view utf8, const ClientEncoding& e);
// `bytes` with every byte that is not part of a well-formed UTF-8 character
// written as \xHH (for records and logs, which are UTF-8).
std::string printable_utf8(std::string_view bytes);

}  // namespace kanon::proxy
