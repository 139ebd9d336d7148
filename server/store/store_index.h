#ifndef JITCACHE_SERVER_STORE_STORE_INDEX_H_
#define JITCACHE_SERVER_STORE_STORE_INDEX_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace jitcache {

// What the store holds, in memory, for eviction: every entry of the small
// columns (action records and upload markers) with its last use and the
// objects it names, and every object with its size and how many entries name
// it. Built from the records at open (never from a scan of the objects), kept
// up to date by the store's writes, and consulted for exact LRU order.
//
// The rule it serves: an object leaves only together with every entry that
// names it (as a compile's output, as a link's output or input, or as an
// upload), and an object still named by a surviving entry stays.
//
// Thread-safety: every method takes the index's own lock; safe from any
// thread. Callers that need a Pick to stay valid until its Remove hold the
// store's write lock across both (see VerifyingStore).
class StoreIndex {
 public:
  enum class Kind : uint8_t { kRecord, kUpload };

  struct Object {
    std::string digest;  // raw 32 bytes
    uint64_t bytes = 0;  // as stored: key, frame and trailer
  };

  // Adds an entry, or replaces it (its old objects lose a reference).
  // `bytes` are the entry's own (key and value); a digest listed twice in
  // `objects` is one reference.
  void Put(Kind kind, absl::string_view key, int64_t last_used_ms,
           uint64_t bytes, const std::vector<Object>& objects);
  // A use of a record (a hit): moves it to the young end. Unknown keys are
  // ignored. The hit path calls it: it allocates nothing (the order and the
  // touched set refer to the map's own, node-stable keys).
  void Touch(absl::string_view key, int64_t now_ms);
  bool Contains(Kind kind, absl::string_view key) const;
  // Which write of `key`'s record the index holds: a number no other write
  // of any record had (a record removed and written again has a new one);
  // nullopt when there is none.
  std::optional<uint64_t> RecordVersion(absl::string_view key) const;
  // A hit answered from a copy in memory: when `key`'s record is still
  // `version` and every object it names is still held, Touch(key) and
  // true; otherwise false and nothing changes.
  bool TouchIfCurrent(absl::string_view key, uint64_t version, int64_t now_ms);
  bool HasObject(absl::string_view digest) const;
  // An object's bytes as Put gave them; nullopt when no entry names it.
  std::optional<uint64_t> ObjectBytes(absl::string_view digest) const;
  // An object found damaged and deleted: entries naming it are left for
  // their own lookups to drop.
  void ForgetObject(absl::string_view digest);

  struct Victims {
    std::vector<std::pair<Kind, std::string>> entries;  // oldest first
    std::vector<std::string> objects;  // named by no surviving entry
    uint64_t bytes = 0;                // freed: entries and objects
  };
  // The least recently used entries whose removal brings the live bytes to
  // `max_live_bytes` or below, then any others last used before
  // `older_than_ms`; at most `max_entries`. Changes nothing.
  Victims Pick(uint64_t max_live_bytes, int64_t older_than_ms,
               size_t max_entries) const;
  // Forgets one entry; returns the objects no entry names any more.
  std::vector<std::string> Remove(Kind kind, absl::string_view key);
  void Remove(const Victims& victims);
  void Clear();

  // Records used since their stored last-used time was written, with the
  // time to write; clears the list.
  std::vector<std::pair<std::string, int64_t>> TakeTouched();

  uint64_t live_bytes() const;
  size_t records() const;
  size_t uploads() const;
  size_t objects() const;

 private:
  struct Entry {
    uint64_t version = 0;
    int64_t last_used_ms = 0;
    uint64_t bytes = 0;
    std::vector<std::string> objects;
  };
  struct ObjectState {
    uint64_t bytes = 0;
    uint32_t refs = 0;
  };
  // Views of the keys owned by the entry maps (node-stable).
  using Order = std::tuple<int64_t, Kind, absl::string_view>;
  using EntryMap = absl::node_hash_map<std::string, Entry>;

  EntryMap& Entries(Kind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return kind == Kind::kRecord ? records_ : uploads_;
  }
  const EntryMap& Entries(Kind kind) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return kind == Kind::kRecord ? records_ : uploads_;
  }
  std::vector<std::string> RemoveLocked(Kind kind, absl::string_view key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TouchLocked(EntryMap::iterator it, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  EntryMap records_ ABSL_GUARDED_BY(mu_);
  EntryMap uploads_ ABSL_GUARDED_BY(mu_);
  std::set<Order> lru_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, ObjectState> objects_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<absl::string_view> touched_ ABSL_GUARDED_BY(mu_);
  uint64_t live_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t last_version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_STORE_INDEX_H_
