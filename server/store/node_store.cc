#include "server/store/node_store.h"

namespace jitcache {

absl::StatusOr<std::unique_ptr<VerifyingStore>> OpenRocksDbStore(
    const std::string& path, const RocksDbOptions& options,
    StoreOptions store_options) {
  absl::StatusOr<std::unique_ptr<KvBackend>> kv = OpenRocksDbKv(path, options);
  if (!kv.ok()) return kv.status();
  return VerifyingStore::Open(*std::move(kv), std::move(store_options));
}

}  // namespace jitcache
