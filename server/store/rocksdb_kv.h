#ifndef JITCACHE_SERVER_STORE_ROCKSDB_KV_H_
#define JITCACHE_SERVER_STORE_ROCKSDB_KV_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/kv_backend.h"

namespace jitcache {

enum class Compression { kNone, kLz4, kZstd };

// "none", "lz4" or "zstd"; nullopt for anything else.
std::optional<Compression> ParseCompression(absl::string_view name);
absl::string_view CompressionName(Compression c);

struct RocksDbOptions {
  // Of objects (blob files) and records at rest. Checksums cover the bytes
  // as served, so they are checked after decompression.
  Compression compression = Compression::kZstd;
  // The cap the store will be held to (0: none). Memtables and blob files
  // are sized from it, so that one flush or one blob file is a small step
  // next to the cap.
  uint64_t max_size = 0;
  // A store damaged so that RocksDB cannot open it: repaired or moved aside
  // (true, a daemon's start), or only reported, naming what a start would
  // do (false: jitcached --verify, which changes nothing).
  bool recover_damage = true;
};

// Opens (creating if needed) the RocksDB node store at `path`, with column
// families "objects", "actions" and "uploads". Fails with FAILED_PRECONDITION
// naming the path when another process holds the store, and with
// PERMISSION_DENIED or the RocksDB error, naming the path, when it cannot be
// created or written. A store damaged so that RocksDB cannot open it is
// repaired (RepairDB) or else moved aside (store_quarantine.h) and replaced
// by an empty one: logged at error level and counted (StoreRecoveryCounts).
absl::StatusOr<std::unique_ptr<KvBackend>> OpenRocksDbKv(
    const std::string& path, const RocksDbOptions& options = {});

// Damaged stores this process repaired, and moved aside for new ones.
struct StoreRecoveries {
  uint64_t recovered = 0;
  uint64_t quarantined = 0;
};
StoreRecoveries StoreRecoveryCounts();

// Replays the store's write-ahead log without opening it for writing, and
// with no tolerance for damage: DATA_LOSS, naming the damage, where a
// normal open would silently drop the records logged after it. The store
// must not be in use.
absl::Status CheckWriteAheadLog(const std::string& path);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_ROCKSDB_KV_H_
