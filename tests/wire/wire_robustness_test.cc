// Random and mutated input for the framing and every decoder. Nothing may
// crash (the sanitizer build turns undefined behaviour into a failure);
// framing answers NeedMore, Frame or Malformed, decoders a value or an error.
// Whatever decodes must encode back to the same bytes.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#include "tests/wire/wire_test_support.h"

using namespace kanon::wire;
using namespace kanon::wire::testing;

namespace {

constexpr uint32_t kMax = 4096;
constexpr int kIterations = 100000;

constexpr char kFrontendTypes[] = {'Q', 'P', 'B', 'D', 'E', 'S', 'H',
                                   'C', 'd', 'c', 'f', 'F', 'X', 'p'};
constexpr char kBackendTypes[] = {'R', 'S', 'K', 'Z', 'T', 'D', 'C', 'I', 'E', 'N', '1', '2',
                                  '3', 't', 'n', 's', 'G', 'H', 'W', 'd', 'c', 'A', 'V', 'v'};

struct Stats {
  size_t frames = 0;
  size_t decoded = 0;
  size_t rejected = 0;
};

// A body in its own allocation of exactly its size, so ASan sees any read
// past its end.
Buffer own_copy(Bytes b) {
  return Buffer(b.begin(), b.end());
}

// `expected_frame()` builds the frame the input was; it is only called on
// success, which keeps the loop cheap.
template <class Message, class ExpectedFrame>
void check_decoded(const Result<Message>& r, ExpectedFrame expected_frame, Stats& stats) {
  if (!r.ok()) {
    ++stats.rejected;
    if (r.error().message.empty()) FAIL("a decoder rejected input without saying why");
    return;
  }
  ++stats.decoded;
  Buffer again;
  encode(r.value(), again);
  // Canonical: decoding then encoding gives back the input.
  if (again != expected_frame()) FAIL("re-encoding a decoded message changed its bytes");
}

// The frame a typed message with this body would have.
Buffer typed_frame(char type, Bytes body) {
  Buffer f;
  f.push_back(static_cast<uint8_t>(type));
  const uint32_t n = static_cast<uint32_t>(body.size() + 4);
  for (int shift = 24; shift >= 0; shift -= 8) f.push_back(static_cast<uint8_t>(n >> shift));
  f.insert(f.end(), body.begin(), body.end());
  return f;
}

Buffer startup_frame(Bytes body) {
  Buffer f = typed_frame(0, body);
  f.erase(f.begin());
  return f;
}

// Every decoder on one body.
void decode_everything(Bytes input, Stats& stats) {
  const Buffer body = own_copy(input);
  for (char type : kFrontendTypes)
    check_decoded(
        decode_frontend_message(type, body), [&] { return typed_frame(type, body); }, stats);
  for (char type : kBackendTypes)
    check_decoded(
        decode_backend_message(type, body), [&] { return typed_frame(type, body); }, stats);
  check_decoded(
      decode_sasl_initial_response(body), [&] { return typed_frame('p', body); }, stats);
  check_decoded(
      decode_startup_packet(body), [&] { return startup_frame(body); }, stats);
  const auto password = decode_password(body);
  if (password.ok() && password.value().size() + 1 != body.size())
    FAIL("decode_password did not consume the whole body");
}

void check_frame(const Frame& f, Bytes input, bool startup) {
  switch (f.status) {
    case FrameStatus::kNeedMore:
      return;
    case FrameStatus::kMalformed:
      if (f.error.empty()) FAIL("framing answered Malformed without saying why");
      return;
    case FrameStatus::kFrame:
      break;
    default:
      FAIL("framing answered an unknown status");
  }
  const size_t header = startup ? 4 : 5;
  const bool consistent = f.size >= header && f.size <= input.size() &&
                          f.body.size() == f.size - header &&
                          f.body.data() == input.data() + header;
  if (!consistent) FAIL("framing returned a frame that does not match its input");
}

// Framing in both modes, then the decoders on whatever frames.
void exercise(Bytes input, Stats& stats) {
  const Buffer owned = own_copy(input);
  const Frame typed = frame_typed(owned, kMax);
  check_frame(typed, owned, false);
  if (typed.status == FrameStatus::kFrame) {
    ++stats.frames;
    const Buffer body = own_copy(typed.body);
    const auto frame = [&] {
      return Buffer(owned.begin(), owned.begin() + static_cast<ptrdiff_t>(typed.size));
    };
    check_decoded(decode_frontend_message(typed.type, body), frame, stats);
    check_decoded(decode_backend_message(typed.type, body), frame, stats);
  }
  const Frame startup = frame_startup(owned, kMax);
  check_frame(startup, owned, true);
  if (startup.status == FrameStatus::kFrame) {
    ++stats.frames;
    const auto frame = [&] {
      return Buffer(owned.begin(), owned.begin() + static_cast<ptrdiff_t>(startup.size));
    };
    check_decoded(decode_startup_packet(own_copy(startup.body)), frame, stats);
  }
}

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  // Uniform enough in [0, n) for fuzzing, and the same on every platform
  // (std::uniform_int_distribution is not specified bit for bit).
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(engine_() % n); }
  uint8_t byte() {
    switch (below(4)) {
      case 0:  // small values make plausible counts, lengths and NULs
        return static_cast<uint8_t>(below(4));
      case 1:
        return static_cast<uint8_t>(0x20 + below(0x5f));
      case 2:
        return below(2) ? 0xff : 0;
      default:
        return static_cast<uint8_t>(engine_());
    }
  }

 private:
  std::mt19937_64 engine_;
};

Buffer random_buffer(Random& rnd) {
  Buffer b(rnd.below(8) == 0 ? rnd.below(400) : rnd.below(40));
  for (uint8_t& x : b) x = rnd.byte();
  // Now and then a header that frames, so the decoders see random bodies
  // behind a valid length.
  if (b.size() >= 5 && rnd.below(3) == 0) {
    const uint32_t n = static_cast<uint32_t>(b.size() - 1);
    for (int i = 0; i < 4; ++i) b[1 + i] = static_cast<uint8_t>(n >> (24 - 8 * i));
  }
  return b;
}

// Valid messages of every kind, to be damaged.
std::vector<Buffer> corpus() {
  std::vector<Buffer> c;
  const auto add = [&c](const auto& m) { c.push_back(encoded(m)); };
  StartupMessage startup;
  startup.parameters = {{"user", "alice"}, {"database", "db"}};
  add(startup);
  add(SslRequest{});
  add(GssEncRequest{});
  add(CancelRequest{1, 2});
  add(Query{"SELECT 1"});
  add(Parse{"s", "SELECT $1", {23}});
  add(Bind{"p", "s", {1}, {Value{{0, 0, 0, 1}}, std::nullopt}, {0, 1}});
  add(Describe{'P', "p"});
  add(Execute{"p", 10});
  add(Sync{});
  add(Close{'S', "s"});
  add(FunctionCall{7, {0}, {Value{{'1'}}}, 1});
  add(PasswordMessage{{'x', 0}});
  add(SaslInitialResponse{"SCRAM-SHA-256", std::vector<uint8_t>{'n', ',', ','}});
  add(CopyData{{'a', 'b'}});
  add(CopyFail{"no"});
  add(Authentication::md5_password({1, 2, 3, 4}));
  add(Authentication::sasl({"SCRAM-SHA-256"}));
  add(Authentication::sasl_continue({'r', '='}));
  add(ParameterStatus{"a", "b"});
  add(BackendKeyData{3, 4});
  add(ReadyForQuery{'T'});
  add(RowDescription{{{"c", 1, 1, 23, 4, -1, 0}, {"d", 0, 0, 25, -1, -1, 1}}});
  add(DataRow{{Value{{'1'}}, std::nullopt}});
  add(CommandComplete{"SELECT 1"});
  add(ErrorResponse{{{'S', "ERROR"}, {'M', "m"}}});
  add(NoticeResponse{{{'M', "n"}}});
  add(ParameterDescription{{23, 25}});
  add(CopyOutResponse{1, {0, 1}});
  add(CopyBothResponse{0, {0}});
  add(NotificationResponse{1, "c", "p"});
  add(FunctionCallResponse{Value{{'x'}}});
  add(NegotiateProtocolVersion{0, {"_pq_.x"}});
  return c;
}

Buffer mutate(Buffer b, Random& rnd) {
  const size_t edits = 1 + rnd.below(3);
  for (size_t i = 0; i < edits && !b.empty(); ++i) {
    switch (rnd.below(5)) {
      case 0:
        b[rnd.below(b.size())] ^= static_cast<uint8_t>(1u << rnd.below(8));
        break;
      case 1:
        b[rnd.below(b.size())] = rnd.byte();
        break;
      case 2:
        b.resize(rnd.below(b.size()));
        break;
      case 3:
        b.insert(b.begin() + static_cast<ptrdiff_t>(rnd.below(b.size() + 1)), rnd.byte());
        break;
      default:
        b.erase(b.begin() + static_cast<ptrdiff_t>(rnd.below(b.size())));
        break;
    }
  }
  return b;
}

}  // namespace

TEST_CASE("random buffers and damaged messages never break the codec") {
  Random rnd(0x6b616e6f6e);  // fixed: a failure reproduces
  const std::vector<Buffer> valid = corpus();
  Stats random_stats;
  Stats mutated_stats;
  for (int i = 0; i < kIterations; ++i) {
    const Buffer b = random_buffer(rnd);
    exercise(b, random_stats);
    decode_everything(b, random_stats);

    const Buffer& original = valid[rnd.below(valid.size())];
    const Buffer m = mutate(original, rnd);
    exercise(m, mutated_stats);
    // The damaged body straight into every decoder, whatever its header says.
    const bool startup = original[0] == 0;
    const size_t header = startup ? 4 : 5;
    if (m.size() >= header) decode_everything(Bytes(m).subspan(header), mutated_stats);
  }
  MESSAGE("random: ", random_stats.frames, " frames, ", random_stats.decoded, " decoded, ",
          random_stats.rejected, " rejected");
  MESSAGE("mutated: ", mutated_stats.frames, " frames, ", mutated_stats.decoded, " decoded, ",
          mutated_stats.rejected, " rejected");
  // The loop must reach the decoders' success paths, not only their errors.
  CHECK(random_stats.frames > 1000);
  CHECK(mutated_stats.frames > 10000);
  CHECK(mutated_stats.decoded > 10000);
}

TEST_CASE("hostile lengths are refused before anything is allocated for them") {
  // Counts far beyond the body: each decoder must answer an error at once.
  const Buffer huge_counts(4, 0xff);
  for (char type : kFrontendTypes) (void)decode_frontend_message(type, huge_counts);
  for (char type : kBackendTypes) (void)decode_backend_message(type, huge_counts);
  const Buffer header = {'D', 0x7f, 0xff, 0xff, 0xff};
  CHECK(frame_typed(header, kMax).status == FrameStatus::kMalformed);
  const Buffer startup = {0x7f, 0xff, 0xff, 0xff};
  CHECK(frame_startup(startup, kMax).status == FrameStatus::kMalformed);
}
