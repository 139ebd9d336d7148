#ifndef JITCACHE_SERVER_STORE_NODE_STORE_H_
#define JITCACHE_SERVER_STORE_NODE_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/rocksdb_kv.h"
#include "server/store/verifying_store.h"

namespace jitcache {

// The node's store: RocksDB at `path` (see OpenRocksDbKv) under the
// verification every read goes through.
absl::StatusOr<std::unique_ptr<VerifyingStore>> OpenRocksDbStore(
    const std::string& path, const RocksDbOptions& options = {},
    StoreOptions store_options = {});

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_NODE_STORE_H_
