#include "rewriter/json_tree.h"

#include "base/text.h"

namespace kanon::rewriter {
namespace {

using base::append_utf8;
using base::hex_value;

constexpr int kMaxDepth = 10000;

}  // namespace

bool JsonTree::parse(std::string_view doc) {
  doc_ = doc;
  pos_ = 0;
  failed_ = false;
  depth_ = 0;
  values_.clear();
  values_.reserve(doc.size() / 8 + 8);
  decoded_.clear();
  parse_value({});
  skip_ws();
  return !failed_ && pos_ == doc_.size();
}

void JsonTree::release_if_larger_than(size_t max_values) {
  if (values_.capacity() <= max_values) return;
  std::vector<JsonValue>().swap(values_);
  decoded_.clear();
  decoded_.shrink_to_fit();
}

int32_t JsonTree::member(int32_t obj, std::string_view key) const {
  if (obj < 0 || at(obj).kind != JsonValue::Kind::kObject) return -1;
  for (int32_t c = at(obj).first_child; c >= 0; c = at(c).next_sibling)
    if (at(c).key == key) return c;
  return -1;
}

void JsonTree::skip_ws() {
  while (pos_ < doc_.size() &&
         (doc_[pos_] == ' ' || doc_[pos_] == '\n' || doc_[pos_] == '\t' || doc_[pos_] == '\r'))
    ++pos_;
}

bool JsonTree::parse_string(std::string_view& out) {
  // REQUIRES: doc_[pos_] == '"'
  const size_t start = ++pos_;
  const char* p = doc_.data() + pos_;
  const char* end = doc_.data() + doc_.size();
  while (p < end && *p != '"' && *p != '\\') ++p;
  pos_ = static_cast<size_t>(p - doc_.data());
  if (pos_ >= doc_.size()) return false;
  if (doc_[pos_] == '"') {
    out = doc_.substr(start, pos_ - start);
    ++pos_;
    return true;
  }
  std::string s(doc_.substr(start, pos_ - start));
  while (pos_ < doc_.size() && doc_[pos_] != '"') {
    char c = doc_[pos_++];
    if (c != '\\') {
      s += c;
      continue;
    }
    if (pos_ >= doc_.size()) return false;
    c = doc_[pos_++];
    switch (c) {
      case '"':
        s += '"';
        break;
      case '\\':
        s += '\\';
        break;
      case '/':
        s += '/';
        break;
      case 'b':
        s += '\b';
        break;
      case 'f':
        s += '\f';
        break;
      case 'n':
        s += '\n';
        break;
      case 'r':
        s += '\r';
        break;
      case 't':
        s += '\t';
        break;
      case 'u': {
        auto read4 = [&](uint32_t& v) {
          if (pos_ + 4 > doc_.size()) return false;
          v = 0;
          for (int i = 0; i < 4; ++i) {
            const int h = hex_value(doc_[pos_++]);
            if (h < 0) return false;
            v = v * 16 + static_cast<uint32_t>(h);
          }
          return true;
        };
        uint32_t cp = 0;
        if (!read4(cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00 && pos_ + 6 <= doc_.size() && doc_[pos_] == '\\' &&
            doc_[pos_ + 1] == 'u') {
          pos_ += 2;
          uint32_t lo = 0;
          if (!read4(lo)) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        append_utf8(s, cp);
        break;
      }
      default:
        return false;
    }
  }
  if (pos_ >= doc_.size()) return false;
  ++pos_;
  decoded_.push_back(std::move(s));
  out = decoded_.back();
  return true;
}

int32_t JsonTree::parse_value(std::string_view key) {
  skip_ws();
  if (failed_ || pos_ >= doc_.size() || ++depth_ > kMaxDepth) {
    failed_ = true;
    return -1;
  }
  const auto index = static_cast<int32_t>(values_.size());
  values_.push_back({});
  values_.back().key = key;
  const char c = doc_[pos_];
  auto& kind_ref = values_.back().kind;
  if (c == '{' || c == '[') {
    const bool object = c == '{';
    kind_ref = object ? JsonValue::Kind::kObject : JsonValue::Kind::kArray;
    ++pos_;
    skip_ws();
    int32_t prev = -1;
    if (pos_ < doc_.size() && doc_[pos_] == (object ? '}' : ']')) {
      ++pos_;
    } else {
      while (!failed_) {
        std::string_view member_key;
        if (object) {
          skip_ws();
          if (pos_ >= doc_.size() || doc_[pos_] != '"' || !parse_string(member_key)) break;
          skip_ws();
          if (pos_ >= doc_.size() || doc_[pos_] != ':') break;
          ++pos_;
        }
        const int32_t child = parse_value(member_key);
        if (child < 0) break;
        if (prev < 0)
          values_[static_cast<size_t>(index)].first_child = child;
        else
          values_[static_cast<size_t>(prev)].next_sibling = child;
        prev = child;
        skip_ws();
        if (pos_ < doc_.size() && doc_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < doc_.size() && doc_[pos_] == (object ? '}' : ']')) {
          ++pos_;
          --depth_;
          return index;
        }
        break;
      }
      failed_ = true;
      return -1;
    }
  } else if (c == '"') {
    std::string_view s;
    if (!parse_string(s)) {
      failed_ = true;
      return -1;
    }
    values_[static_cast<size_t>(index)].kind = JsonValue::Kind::kString;
    values_[static_cast<size_t>(index)].text = s;
  } else if ((c == 't' && doc_.compare(pos_, 4, "true") == 0) ||
             (c == 'f' && doc_.compare(pos_, 5, "false") == 0)) {
    const bool t = c == 't';
    kind_ref = JsonValue::Kind::kBool;
    values_.back().boolean = t;
    pos_ += t ? 4 : 5;
  } else if (c == 'n' && doc_.compare(pos_, 4, "null") == 0) {
    pos_ += 4;
  } else {
    const size_t start = pos_;
    bool negative = false;
    if (doc_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    int64_t v = 0;
    while (pos_ < doc_.size() && doc_[pos_] >= '0' && doc_[pos_] <= '9')
      v = v * 10 + (doc_[pos_++] - '0');
    while (pos_ < doc_.size() &&
           (doc_[pos_] == '.' || doc_[pos_] == 'e' || doc_[pos_] == 'E' || doc_[pos_] == '+' ||
            doc_[pos_] == '-' || (doc_[pos_] >= '0' && doc_[pos_] <= '9')))
      ++pos_;
    if (pos_ == start) {
      failed_ = true;
      return -1;
    }
    auto& v_ref = values_[static_cast<size_t>(index)];
    v_ref.kind = JsonValue::Kind::kNumber;
    v_ref.number = negative ? -v : v;
    v_ref.text = doc_.substr(start, pos_ - start);
  }
  --depth_;
  return index;
}

}  // namespace kanon::rewriter
