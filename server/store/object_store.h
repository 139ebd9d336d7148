#ifndef JITCACHE_SERVER_STORE_OBJECT_STORE_H_
#define JITCACHE_SERVER_STORE_OBJECT_STORE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/digest.h"
#include "common/object_kind.h"
#include "jitcache/v1/store.pb.h"

namespace jitcache {

struct StoredObject {
  ObjectKind kind;
  std::string bytes;
};

// A view of an object to be written.
struct ObjectRef {
  Digest digest;
  ObjectKind kind;
  absl::string_view bytes;
};

struct StoreStats {
  uint64_t actions = 0;  // records in the action index
  uint64_t uploads = 0;  // uploaded objects no record may name yet
  uint64_t objects = 0;
  uint64_t bytes = 0;            // what the backend holds (RocksDB: its files)
  uint64_t live_bytes = 0;       // entries and objects, uncompressed
  uint64_t corrupt_removed = 0;  // entries that failed verification and went
  uint64_t write_failures = 0;   // writes that failed (a full disk): results
                                 // answered but not kept
  uint64_t evicted_records = 0;  // records (and uploads) evicted or cleared
  uint64_t evicted_bytes = 0;    // their live bytes, with their objects'
};

// What an eviction must reach; either or both.
struct EvictionGoal {
  std::optional<uint64_t> max_live_bytes;  // evict LRU entries down to this
  std::optional<absl::Time> older_than;    // and every entry last used before
};

struct EvictionResult {
  uint64_t records = 0;
  uint64_t uploads = 0;
  uint64_t objects = 0;
  uint64_t bytes = 0;  // live bytes removed

  EvictionResult& operator+=(const EvictionResult& o) {
    records += o.records;
    uploads += o.uploads;
    objects += o.objects;
    bytes += o.bytes;
    return *this;
  }
};

// Content-addressed objects plus an action index (cache key -> result record).
//
// Reads verify what they return: an object whose frame, size or checksum does
// not match, or a record that does not parse, is removed, counted in
// corrupt_removed and reported as a miss (empty optional). A miss is never an
// error; errors are for a store that cannot be read or written.
//
// Thread-safety: every method may be called from any thread concurrently.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  virtual absl::StatusOr<std::optional<StoredObject>> GetObject(
      const Digest& digest) = 0;
  virtual absl::StatusOr<std::optional<v1::ActionRecord>> GetAction(
      const Digest& key) = 0;

  // For copies of an entry kept outside the store (a hit's answer in
  // memory). RecordVersion names the write of `key`'s record the store
  // holds now (nullopt: none); read it before the record, so that a copy
  // is never labelled newer than it is. StillCurrent is true while that
  // very write is held with every object it names, and then counts as a
  // use of it (as GetAction does); an entry evicted, removed, cleared,
  // found damaged or written again since is not current.
  virtual std::optional<uint64_t> RecordVersion(const Digest& key) = 0;
  virtual bool StillCurrent(const Digest& key, uint64_t version) = 0;

  // Writes the objects and the record atomically: a reader (or a store
  // reopened after a crash) sees all of them or none.
  virtual absl::Status PutResult(const Digest& key,
                                 const v1::ActionRecord& record,
                                 std::span<const ObjectRef> objects) = 0;
  // Writes objects with no record (uploads); rewriting one is harmless,
  // since its address is its content.
  virtual absl::Status PutObjects(std::span<const ObjectRef> objects) = 0;
  // Removes a record, and the objects no other entry names.
  virtual absl::Status RemoveAction(const Digest& key) = 0;

  // Every record whose key is >= `start` (raw bytes), in key order, until
  // `visit` returns false. Records that do not parse are skipped.
  virtual absl::Status ForEachRecord(
      absl::string_view start,
      const std::function<bool(const Digest& key,
                               const v1::ActionRecord& record)>& visit) = 0;

  // Removes least recently used entries, each with the objects that only it
  // names (a link's inputs included), until `goal` is met. Each batch is
  // atomic: a failed write (a full disk) removes nothing of its batch.
  virtual absl::StatusOr<EvictionResult> Evict(const EvictionGoal& goal) = 0;
  // Removes everything, at once.
  virtual absl::StatusOr<EvictionResult> Clear() = 0;
  // Gives removed entries' space back to the file system (may take seconds).
  virtual absl::Status Reclaim(double blob_age_cutoff) = 0;
  // Writes the last-used times of hits back into their records.
  virtual absl::Status PersistLastUsed() = 0;

  // Called after every write that adds entries or objects (results,
  // uploads, imports), on the writer's thread, with no store lock held;
  // empty: nothing. The janitor listens here, so no write path has to
  // remember to tell it. Returns once no call of the previous listener is
  // running.
  virtual void OnWrite(std::function<void()> listener) = 0;

  // After writes failed, tries to make the store writable again (see
  // KvBackend::ResumeWrites); OK at once while writes succeed.
  virtual absl::Status ResumeWrites() = 0;
  // Whether the last write failed (a full or broken disk): a write that is
  // not needed is better not tried until one succeeds again.
  virtual bool WritesFailing() = 0;

  virtual StoreStats Stats() = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_OBJECT_STORE_H_
