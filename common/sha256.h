#ifndef JITCACHE_COMMON_SHA256_H_
#define JITCACHE_COMMON_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace jitcache {

// SHA-256 (FIPS 180-4) by OpenSSL's libcrypto, linked statically (its
// SHA-256 code alone, with the CPU's SHA instructions where it has them):
// the front ends that load nothing but libc and libstdc++ (libnvrtc.so.13's
// include scan and keys, libnvJitLink.so.13's inputs) hash with it too, and
// loading libcrypto.so costs a process 1-2 ms and touches the host
// program's OpenSSL state. Its symbols stay inside each binary
// (--exclude-libs).
// Not thread-safe: one hasher per thread.
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();

  void Update(std::string_view data);
  void Update(const void* data, size_t size);
  // Ends the message; the hasher must not be used afterwards.
  Digest Finish();

  static Digest Hash(std::string_view data);

 private:
  // OpenSSL's SHA256_CTX, without its header here (sha256.cc checks the
  // size and alignment).
  alignas(8) unsigned char context_[112];
};

}  // namespace jitcache

#endif  // JITCACHE_COMMON_SHA256_H_
