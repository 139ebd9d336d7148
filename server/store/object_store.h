#ifndef JITCACHE_SERVER_STORE_OBJECT_STORE_H_
#define JITCACHE_SERVER_STORE_OBJECT_STORE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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
  uint64_t actions = 0;  // entries in the action index (may be estimated)
  uint64_t bytes = 0;    // bytes on disk or in memory (may be estimated)
  uint64_t corrupt_removed = 0;  // entries that failed verification and went
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

  // Writes the objects and the record atomically: a reader (or a store
  // reopened after a crash) sees all of them or none.
  virtual absl::Status PutResult(const Digest& key,
                                 const v1::ActionRecord& record,
                                 std::span<const ObjectRef> objects) = 0;
  // Writes objects with no record (uploads); rewriting one is harmless,
  // since its address is its content.
  virtual absl::Status PutObjects(std::span<const ObjectRef> objects) = 0;
  // Rewrites an existing record (e.g. its last-used time).
  virtual absl::Status PutAction(const Digest& key,
                                 const v1::ActionRecord& record) = 0;
  virtual absl::Status RemoveAction(const Digest& key) = 0;

  virtual StoreStats Stats() = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_OBJECT_STORE_H_
