#ifndef JITCACHE_SERVER_REMOTE_REDIS_SLOT_H_
#define JITCACHE_SERVER_REMOTE_REDIS_SLOT_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace jitcache {

// Redis Cluster's 16384 hash slots.
inline constexpr int kRedisSlots = 16384;

// The slot of `key` as Redis Cluster computes it: CRC16 (XMODEM) of the
// key, or of its hash tag (what lies between the first '{' and the next
// '}', when that is not empty), modulo 16384. Keys with one tag share a
// slot, and so a node.
int RedisKeySlot(absl::string_view key);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REDIS_SLOT_H_
