#ifndef JITCACHE_COMMON_LENGTH_FRAME_H_
#define JITCACHE_COMMON_LENGTH_FRAME_H_

// The one framing of jitcache's own byte streams (the daemon <-> worker
// protocol, the framed socket and the `jitcache` front end that speaks it): a
// 4-byte little-endian length, then that many bytes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/little_endian.h"

namespace jitcache::frame {

inline constexpr size_t kHeaderBytes = 4;
// A length no frame has: room for protocols to signal out of band with it
// (the worker's crash report).
inline constexpr uint32_t kNoFrameLength = 0xFFFFFFFF;
inline constexpr size_t kMaxPayloadBytes = kNoFrameLength - 1;

// Writes kHeaderBytes at `out`. Allocation-free, so async-signal-safe.
inline void PutHeader(char* out, uint32_t length) {
  le::Put<uint32_t>(out, length);
}
inline uint32_t LengthOf(const char* header) {
  return le::Get<uint32_t>(header);
}

// Blocking whole-frame I/O on a pipe or socket (see fd_io.h for signals
// and retries). False when the peer has gone or the payload is too long
// to frame.
bool Write(int fd, std::string_view payload);
// A header: nullopt at EOF or on an error.
std::optional<uint32_t> ReadLength(int fd);
// `length` bytes of payload; nullopt when the peer stops short.
std::optional<std::string> ReadPayload(int fd, uint32_t length);
// One whole frame; nullopt at EOF, on an error, or when it declares more
// than `max_bytes` (nothing is allocated for it then).
std::optional<std::string> Read(int fd, size_t max_bytes);

}  // namespace jitcache::frame

#endif  // JITCACHE_COMMON_LENGTH_FRAME_H_
