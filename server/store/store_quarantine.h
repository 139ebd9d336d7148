#ifndef JITCACHE_SERVER_STORE_STORE_QUARANTINE_H_
#define JITCACHE_SERVER_STORE_STORE_QUARANTINE_H_

#include <string>

#include "absl/status/statusor.h"

namespace jitcache {

// How many damaged stores are kept beside the store for inspection; the
// oldest go first, so that a loop of failures cannot fill the disk.
inline constexpr int kMostQuarantinedStores = 3;

// Moves the store at `path` aside, to PATH.damaged-YYYYmmdd-HHMMSS-N beside
// it (private, as the store was), and removes the oldest such directories
// past kMostQuarantinedStores. The path it went to; the error when it
// could not be moved.
absl::StatusOr<std::string> QuarantineStore(const std::string& path);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_STORE_QUARANTINE_H_
