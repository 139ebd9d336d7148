#ifndef JITCACHE_SERVER_STORE_KV_BACKEND_H_
#define JITCACHE_SERVER_STORE_KV_BACKEND_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// kUploads holds an UploadRecord per uploaded object, so that every object
// is named by some entry of the small columns (see StoreIndex).
enum class Column { kObjects, kActions, kUploads };

struct KvWrite {
  Column column;
  absl::string_view key;
  absl::string_view value;  // ignored when erase
  bool erase = false;
};

// Raw bytes in two columns. Knows nothing of frames or records: verification
// lives once, in VerifyingStore, above every backend.
// Thread-safety: every method may be called concurrently.
class KvBackend {
 public:
  virtual ~KvBackend() = default;
  virtual absl::StatusOr<std::optional<std::string>> Get(
      Column column, absl::string_view key) = 0;
  // Applies all writes atomically.
  virtual absl::Status Write(std::span<const KvWrite> writes) = 0;
  // What the backend really holds: for RocksDB the space its directory
  // takes, as du counts it.
  virtual uint64_t Bytes() = 0;
  // After writes failed (a full disk; RESOURCE_EXHAUSTED where the cause is
  // known to be space), tries to make the backend writable again; OK and
  // nothing done while it is writable. Cheap enough to call every second;
  // called from one thread at a time.
  virtual absl::Status ResumeWrites() { return absl::OkStatus(); }
  // Calls `visit` for every entry of `column` in key order, starting at the
  // first key >= `start`, from a consistent snapshot, until it returns false.
  virtual absl::Status ForEach(
      Column column,
      const std::function<bool(absl::string_view key, absl::string_view value)>&
          visit,
      absl::string_view start = {}) = 0;
  // Removes every entry of `column` at once (a range delete, not a scan).
  virtual absl::Status EraseAll(Column column) = 0;
  // Gives the space of removed entries back to the file system, as far as
  // it can: flushes memtables and compacts, collecting garbage from the
  // oldest `blob_age_cutoff` fraction of blob files. May take seconds; never
  // call it on a request's thread.
  virtual absl::Status Reclaim(double blob_age_cutoff) = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_KV_BACKEND_H_
