#ifndef JITCACHE_COMMON_SHA256_H_
#define JITCACHE_COMMON_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace jitcache {

// SHA-256 (FIPS 180-4) in plain C++, with the CPU's SHA instructions (x86
// SHA-NI) where it has them. No libcrypto: the front ends that load
// nothing but libc and libstdc++ (libnvrtc.so.13's include scan and keys,
// libnvJitLink.so.13's inputs) hash with it too, and loading libcrypto
// costs a process 1-2 ms and touches the host program's OpenSSL state.
// Not thread-safe: one hasher per thread.
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;
  using State = std::array<uint32_t, 8>;

  Sha256();

  void Update(std::string_view data);
  void Update(const void* data, size_t size);
  // Ends the message; the hasher must not be used afterwards.
  Digest Finish();

  static Digest Hash(std::string_view data);
  // The same, by the plain C++ code alone unless `cpu_instructions` (which
  // then holds only where the CPU has them): for the tests of both.
  static Digest HashForTest(std::string_view data, bool cpu_instructions);

 private:
  using Compress = void (*)(State&, const unsigned char*, size_t);
  static Compress Best();
  explicit Sha256(Compress compress);

  State state_;
  unsigned char buffer_[64] = {};
  size_t buffered_ = 0;
  uint64_t length_ = 0;
  Compress compress_;
};

}  // namespace jitcache

#endif  // JITCACHE_COMMON_SHA256_H_
