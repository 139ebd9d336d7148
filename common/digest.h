#ifndef JITCACHE_COMMON_DIGEST_H_
#define JITCACHE_COMMON_DIGEST_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// A SHA-256 value: the address of an object and the form of a cache key.
// A value type; safe to copy and share between threads. Everything but
// FromHex (digest_hex.cc) is plain C++: the front ends that load nothing
// but libc and libstdc++ use it.
struct Digest {
  std::array<uint8_t, 32> bytes{};

  static Digest Of(std::string_view data);
  // Parses 64 hex digits (either case).
  static absl::StatusOr<Digest> FromHex(absl::string_view hex);
  // Takes exactly 32 raw bytes; nullopt for any other length.
  static std::optional<Digest> FromBytes(std::string_view raw);

  std::string Hex() const;
  std::string_view AsBytes() const {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }

  friend bool operator==(const Digest&, const Digest&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const Digest& d) {
    return H::combine(std::move(h), absl::string_view(d.AsBytes().data(),
                                                      d.AsBytes().size()));
  }
};

}  // namespace jitcache

// A digest is already uniformly distributed: its first bytes are its hash.
template <>
struct std::hash<jitcache::Digest> {
  size_t operator()(const jitcache::Digest& d) const noexcept {
    size_t h;
    std::memcpy(&h, d.bytes.data(), sizeof(h));
    return h;
  }
};

#endif  // JITCACHE_COMMON_DIGEST_H_
