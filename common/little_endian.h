#ifndef JITCACHE_COMMON_LITTLE_ENDIAN_H_
#define JITCACHE_COMMON_LITTLE_ENDIAN_H_

// Fixed-width little-endian integers, the byte order of every length and
// number jitcache frames itself (worker protocol, framed socket, object and
// remote frames, bundles, key hashing): one definition, whatever the host.
#include <cstddef>
#include <cstdint>
#include <string>

namespace jitcache::le {

template <typename T>
inline void Put(void* out, T v) {
  auto* p = static_cast<unsigned char*>(out);
  for (size_t i = 0; i < sizeof(T); ++i) {
    p[i] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * i));
  }
}

template <typename T>
inline T Get(const void* in) {
  const auto* p = static_cast<const unsigned char*>(in);
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t{p[i]} << (8 * i);
  return static_cast<T>(v);
}

template <typename T>
inline void Append(std::string* out, T v) {
  char bytes[sizeof(T)];
  Put<T>(bytes, v);
  out->append(bytes, sizeof(T));
}

}  // namespace jitcache::le

#endif  // JITCACHE_COMMON_LITTLE_ENDIAN_H_
