#include "common/sha256.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace jitcache {
namespace {

using State = Sha256::State;

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr State kInitial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                            0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

inline uint32_t BigEndian32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 |
         uint32_t{p[3]};
}

// FIPS 180-4, section 6.2.2, over `blocks` 64-byte blocks.
void CompressPlain(State& h, const unsigned char* data, size_t blocks) {
  for (; blocks > 0; --blocks, data += 64) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t) w[t] = BigEndian32(data + 4 * t);
    for (int t = 16; t < 64; ++t) {
      const uint32_t s0 =
          Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const uint32_t s1 =
          Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5],
             g = h[6], k = h[7];
    for (int t = 0; t < 64; ++t) {
      const uint32_t t1 = k + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) +
                          ((e & f) ^ (~e & g)) + kRound[t] + w[t];
      const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) +
                          ((a & b) ^ (a & c) ^ (b & c));
      k = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
  }
}

#if defined(__x86_64__)
// The same with the SHA extensions: sha256rnds2 does two rounds on the
// state held as ABEF/CDGH, sha256msg1/msg2 the message schedule's sigma
// terms four words at a time.
__attribute__((target("sha,sse4.1,ssse3"))) void CompressShaNi(
    State& h, const unsigned char* data, size_t blocks) {
  const __m128i byte_swap =
      _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&h[0]));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&h[4]));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[16];  // w[i]: the schedule's words 4i..4i+3
    for (int i = 0; i < 4; ++i) {
      w[i] = _mm_shuffle_epi8(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
          byte_swap);
    }
    for (int i = 0; i < 16; ++i) {
      if (i >= 4) {
        // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at once:
        // msg1 adds s0 to w[i-4], alignr brings W[t-7], msg2 adds s1.
        const __m128i partial =
            _mm_add_epi32(_mm_sha256msg1_epu32(w[i - 4], w[i - 3]),
                          _mm_alignr_epi8(w[i - 1], w[i - 2], 4));
        w[i] = _mm_sha256msg2_epu32(partial, w[i - 1]);
      }
      __m128i msg = _mm_add_epi32(
          w[i],
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRound[4 * i])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
      msg = _mm_shuffle_epi32(msg, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&h[0]), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&h[4]), hgfe);
}

bool HasShaNi() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool sse = (c & bit_SSSE3) != 0 && (c & bit_SSE4_1) != 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return sse && (b & bit_SHA) != 0;
}
#endif

}  // namespace

Sha256::Compress Sha256::Best() {
  static const Compress best = [] {
#if defined(__x86_64__)
    if (HasShaNi()) return &CompressShaNi;
#endif
    return &CompressPlain;
  }();
  return best;
}

Sha256::Sha256() : Sha256(Best()) {}

Sha256::Sha256(Compress compress) : state_(kInitial), compress_(compress) {}

void Sha256::Update(std::string_view data) { Update(data.data(), data.size()); }

void Sha256::Update(const void* data, size_t size) {
  const auto* in = static_cast<const unsigned char*>(data);
  length_ += size;
  if (buffered_ > 0) {
    const size_t take = std::min(size, sizeof(buffer_) - buffered_);
    std::memcpy(buffer_ + buffered_, in, take);
    buffered_ += take;
    in += take;
    size -= take;
    if (buffered_ < sizeof(buffer_)) return;
    compress_(state_, buffer_, 1);
    buffered_ = 0;
  }
  const size_t whole = size / 64;
  if (whole > 0) compress_(state_, in, whole);
  in += 64 * whole;
  size -= 64 * whole;
  if (size > 0) std::memcpy(buffer_, in, size);
  buffered_ = size;
}

Sha256::Digest Sha256::Finish() {
  // The tail, 0x80, zeros, and the length in bits: one or two blocks.
  unsigned char tail[128] = {};
  std::memcpy(tail, buffer_, buffered_);
  tail[buffered_] = 0x80;
  const size_t tail_blocks = buffered_ < 56 ? 1 : 2;
  const uint64_t bits = length_ * 8;
  for (int i = 0; i < 8; ++i) {
    tail[64 * tail_blocks - 1 - i] =
        static_cast<unsigned char>(bits >> (8 * i));
  }
  compress_(state_, tail, tail_blocks);
  Digest digest;
  for (size_t i = 0; i < state_.size(); ++i) {
    for (int b = 0; b < 4; ++b) {
      digest[4 * i + b] = static_cast<uint8_t>(state_[i] >> (24 - 8 * b));
    }
  }
  return digest;
}

Sha256::Digest Sha256::Hash(std::string_view data) {
  Sha256 hasher;
  hasher.Update(data);
  return hasher.Finish();
}

Sha256::Digest Sha256::HashForTest(std::string_view data,
                                   bool cpu_instructions) {
  Sha256 hasher(cpu_instructions ? Best() : &CompressPlain);
  hasher.Update(data);
  return hasher.Finish();
}

}  // namespace jitcache
