#ifndef JITCACHE_SERVER_STORE_ROCKSDB_KV_H_
#define JITCACHE_SERVER_STORE_ROCKSDB_KV_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/kv_backend.h"
#include "server/store/verifying_store.h"

namespace jitcache {

// Opens (creating if needed) the RocksDB node store at `path`, with column
// families "objects" and "actions". Fails with FAILED_PRECONDITION naming the
// path when another process holds the store, and with PERMISSION_DENIED or
// the RocksDB error, naming the path, when it cannot be created or written.
absl::StatusOr<std::unique_ptr<KvBackend>> OpenRocksDbKv(
    const std::string& path);

absl::StatusOr<std::unique_ptr<VerifyingStore>> OpenRocksDbStore(
    const std::string& path);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_ROCKSDB_KV_H_
