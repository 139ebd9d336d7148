#ifndef JITCACHE_SERVER_STORE_STORE_RELEASE_H_
#define JITCACHE_SERVER_STORE_STORE_RELEASE_H_

#include <optional>
#include <string>

namespace jitcache {

// The RocksDB release that last opened the store at `path`, as its newest
// OPTIONS file names it ("7.8.3"), when that release is newer than the one
// this daemon links; nullopt when it is not, or no OPTIONS file says.
// RocksDB reports tables and manifests of a format it does not know as
// corruption: a store a newer release wrote is not damage, and is neither
// repaired nor moved aside.
std::optional<std::string> NewerRocksDbRelease(const std::string& path);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_STORE_RELEASE_H_
