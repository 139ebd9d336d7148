#ifndef JITCACHE_SERVER_STORE_OBJECT_FRAME_H_
#define JITCACHE_SERVER_STORE_OBJECT_FRAME_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/object_kind.h"

namespace jitcache {

// The stored form of an object: the bytes, then a 24-byte trailer
//   magic "JCOB" | format version (1 byte) | kind (1 byte) | 2 reserved bytes
//   | size (8 bytes, little endian) | XXH3-64 of the bytes (8 bytes, LE)
// A trailer rather than a header so that a verified read hands out the
// bytes by truncating the value it read, without a copy. The checksum is
// XXH3 rather than the SHA-256 that names the object so that verifying
// every read costs microseconds even for megabyte objects; the full SHA-256
// check belongs to `jitcached --verify`.
inline constexpr uint8_t kObjectFrameVersion = 2;
inline constexpr size_t kObjectFrameTrailerSize = 24;

std::string EncodeObjectFrame(ObjectKind kind, absl::string_view bytes);

struct DecodedObject {
  ObjectKind kind;
  absl::string_view bytes;  // the frame's prefix
};

// DATA_LOSS, saying what is wrong, when the frame does not verify.
absl::StatusOr<DecodedObject> DecodeObjectFrame(absl::string_view frame);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_OBJECT_FRAME_H_
