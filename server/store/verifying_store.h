#ifndef JITCACHE_SERVER_STORE_VERIFYING_STORE_H_
#define JITCACHE_SERVER_STORE_VERIFYING_STORE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/store/kv_backend.h"
#include "server/store/object_store.h"
#include "server/store/store_index.h"

namespace jitcache {

struct VerifyReport {
  uint64_t objects = 0;
  uint64_t records = 0;
  uint64_t uploads = 0;
  uint64_t bad_objects = 0;           // frame, checksum or SHA-256 mismatch
  uint64_t bad_records = 0;           // does not parse
  uint64_t dangling_records = 0;      // points to a missing or damaged object
  uint64_t unreferenced_objects = 0;  // sound, but no record or upload names
  std::vector<std::string> problems;  // the first few, for people

  bool ok() const { return bad_objects + bad_records + dangling_records == 0; }
};

struct StoreOptions {
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// The ObjectStore over any KvBackend: frames objects, serialises records,
// verifies both on every read (see ObjectStore), and keeps the StoreIndex
// that eviction orders by.
//
// Writes that change which entries name which objects (results, uploads,
// removals, eviction, clear) are serialised by one write lock, so that an
// object is never deleted while a new entry comes to name it. Reads take no
// store lock; a hit's last use is kept in memory and written back in batches
// by PersistLastUsed, never on the hit path.
// Thread-safe.
class VerifyingStore final : public ObjectStore {
 public:
  // Loads the index from the backend's records and uploads.
  static absl::StatusOr<std::unique_ptr<VerifyingStore>> Open(
      std::unique_ptr<KvBackend> backend, StoreOptions options = {});

  absl::StatusOr<std::optional<StoredObject>> GetObject(
      const Digest& digest) override;
  absl::StatusOr<std::optional<v1::ActionRecord>> GetAction(
      const Digest& key) override;
  std::optional<uint64_t> RecordVersion(const Digest& key) override;
  bool StillCurrent(const Digest& key, uint64_t version) override;
  absl::Status PutResult(const Digest& key, const v1::ActionRecord& record,
                         std::span<const ObjectRef> objects) override;
  absl::Status PutObjects(std::span<const ObjectRef> objects) override;
  absl::Status RemoveAction(const Digest& key) override;
  absl::Status ForEachRecord(
      absl::string_view start,
      const std::function<bool(
          const Digest& key, const v1::ActionRecord& record)>& visit) override;
  absl::StatusOr<EvictionResult> Evict(const EvictionGoal& goal) override;
  absl::StatusOr<EvictionResult> Clear() override;
  absl::Status Reclaim(double blob_age_cutoff) override;
  absl::Status PersistLastUsed() override;
  void OnWrite(std::function<void()> listener) override;
  absl::Status ResumeWrites() override;
  bool WritesFailing() override { return writes_failing_.load(); }
  StoreStats Stats() override;

  // A full check of every entry: each object's frame and SHA-256 against its
  // address, each record's encoding and the objects it names. Reads only;
  // safe while serving, but meant for `jitcached --verify`.
  absl::StatusOr<VerifyReport> Verify();

  // For tests that damage entries underneath the verification.
  KvBackend& backend() { return *backend_; }

 private:
  VerifyingStore(std::unique_ptr<KvBackend> backend, StoreOptions options);
  absl::Status LoadIndex();
  void IndexRecord(absl::string_view key, const v1::ActionRecord& record,
                   uint64_t value_bytes);
  void IndexUpload(absl::string_view digest, const v1::UploadRecord& upload,
                   uint64_t value_bytes);
  void RemoveCorrupt(Column column, const Digest& key);
  // Deletes an entry and the objects only it named, in one batch.
  absl::Status RemoveEntry(StoreIndex::Kind kind, const Digest& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status WriteUploads(std::span<const ObjectRef> uploaded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status WriteResult(const Digest& key, const v1::ActionRecord& record,
                           std::span<const ObjectRef> objects)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The backend's write, counted and logged when it fails and when writes
  // succeed again.
  absl::Status Commit(std::span<const KvWrite> writes);
  // Calls the OnWrite listener, if any, with no store lock held.
  void NotifyWrite();
  int64_t NowMs() const { return absl::ToUnixMillis(options_.now()); }

  const std::unique_ptr<KvBackend> backend_;
  const StoreOptions options_;
  StoreIndex index_;
  absl::Mutex write_mu_;
  absl::Mutex listener_mu_;
  std::function<void()> on_write_ ABSL_GUARDED_BY(listener_mu_);
  int listener_calls_ ABSL_GUARDED_BY(listener_mu_) = 0;
  std::atomic<uint64_t> corrupt_removed_{0};
  std::atomic<uint64_t> write_failures_{0};
  std::atomic<bool> writes_failing_{false};  // the last write failed
  std::atomic<uint64_t> evicted_records_{0};
  std::atomic<uint64_t> evicted_bytes_{0};
};

std::unique_ptr<VerifyingStore> NewMemoryStore(StoreOptions options = {});

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_VERIFYING_STORE_H_
