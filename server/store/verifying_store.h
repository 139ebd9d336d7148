#ifndef JITCACHE_SERVER_STORE_VERIFYING_STORE_H_
#define JITCACHE_SERVER_STORE_VERIFYING_STORE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/store/kv_backend.h"
#include "server/store/object_store.h"

namespace jitcache {

struct VerifyReport {
  uint64_t objects = 0;
  uint64_t records = 0;
  uint64_t bad_objects = 0;           // frame, checksum or SHA-256 mismatch
  uint64_t bad_records = 0;           // does not parse
  uint64_t dangling_records = 0;      // points to a missing or damaged object
  uint64_t unreferenced_objects = 0;  // sound, but no record names them
  std::vector<std::string> problems;  // the first few, for people

  bool ok() const { return bad_objects + bad_records + dangling_records == 0; }
};

// The ObjectStore over any KvBackend: frames objects, serialises records, and
// verifies both on every read (see ObjectStore). Thread-safe.
class VerifyingStore final : public ObjectStore {
 public:
  explicit VerifyingStore(std::unique_ptr<KvBackend> backend);

  absl::StatusOr<std::optional<StoredObject>> GetObject(
      const Digest& digest) override;
  absl::StatusOr<std::optional<v1::ActionRecord>> GetAction(
      const Digest& key) override;
  absl::Status PutResult(const Digest& key, const v1::ActionRecord& record,
                         std::span<const ObjectRef> objects) override;
  absl::Status PutObjects(std::span<const ObjectRef> objects) override;
  absl::Status PutAction(const Digest& key,
                         const v1::ActionRecord& record) override;
  absl::Status RemoveAction(const Digest& key) override;
  StoreStats Stats() override;

  // A full check of every entry: each object's frame and SHA-256 against its
  // address, each record's encoding and the object it points to. Reads only;
  // safe while serving, but meant for `jitcached --verify`.
  absl::StatusOr<VerifyReport> Verify();

  // For tests that damage entries underneath the verification.
  KvBackend& backend() { return *backend_; }

 private:
  void RemoveCorrupt(Column column, const Digest& key);
  // Objects, and the record when there is a key, in one batch.
  absl::Status PutResult(const std::optional<Digest>& key,
                         const v1::ActionRecord& record,
                         std::span<const ObjectRef> objects);

  std::unique_ptr<KvBackend> backend_;
  std::atomic<uint64_t> corrupt_removed_{0};
};

std::unique_ptr<VerifyingStore> NewMemoryStore();

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_VERIFYING_STORE_H_
