#ifndef JITCACHE_COMMON_SHA256_H_
#define JITCACHE_COMMON_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace jitcache {

// SHA-256 (FIPS 180-4). Not thread-safe: one hasher per thread.
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();

  void Update(absl::string_view data);
  void Update(const void* data, size_t size);
  // Ends the message; the hasher must not be used afterwards.
  Digest Finish();

  static Digest Hash(absl::string_view data);

  // Whether blocks go through the CPU's SHA extensions (SHA-NI, detected at
  // start). SetAccelerated(false) forces the portable code (tests compare
  // the two); true only takes effect where the CPU has them. Returns the
  // setting now.
  static bool Accelerated();
  static bool SetAccelerated(bool on);

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_COMMON_SHA256_H_
