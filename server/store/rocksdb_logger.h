#ifndef JITCACHE_SERVER_STORE_ROCKSDB_LOGGER_H_
#define JITCACHE_SERVER_STORE_ROCKSDB_LOGGER_H_

#include <rocksdb/env.h>

#include <memory>

namespace jitcache {

// RocksDB's messages at warning level and above, written to the daemon's
// own log (the journal under systemd) instead of a LOG file in the store.
//
// Why not RocksDB's LOG file: it lives on the store's file system, and once
// a write to it fails (a full disk), Debian's RocksDB (built with
// assertions) aborts the daemon on the next message. It also took space
// the store's cap did not count. Thread-safe.
std::shared_ptr<rocksdb::Logger> NewDaemonLogForRocksDb();

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_ROCKSDB_LOGGER_H_
