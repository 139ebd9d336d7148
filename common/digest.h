#ifndef JITCACHE_COMMON_DIGEST_H_
#define JITCACHE_COMMON_DIGEST_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// A SHA-256 value: the address of an object and the form of a cache key.
// A value type; safe to copy and share between threads.
struct Digest {
  std::array<uint8_t, 32> bytes{};

  static Digest Of(absl::string_view data);
  // Parses 64 hex digits (either case).
  static absl::StatusOr<Digest> FromHex(absl::string_view hex);
  // Takes exactly 32 raw bytes.
  static absl::StatusOr<Digest> FromBytes(absl::string_view raw);

  std::string Hex() const;
  absl::string_view AsBytes() const {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }

  friend bool operator==(const Digest&, const Digest&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const Digest& d) {
    return H::combine(std::move(h), d.AsBytes());
  }
};

}  // namespace jitcache

#endif  // JITCACHE_COMMON_DIGEST_H_
