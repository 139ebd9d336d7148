#ifndef JITCACHE_SERVER_BUILD_KEPT_FILE_SETS_H_
#define JITCACHE_SERVER_BUILD_KEPT_FILE_SETS_H_

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/digest.h"

namespace jitcache {

// The files of a compile's view (absolute path, bytes).
using FileSet = std::vector<std::pair<std::string, std::string>>;

// Sets of files that requests carried, kept by their set's digest, so that
// the next miss with the same files (another kernel including the same
// headers, or the same one for another architecture or -D) needs no bytes
// from the client. At most `keep` sets, the least recently used going
// first. Thread-safe.
class KeptFileSets {
 public:
  explicit KeptFileSets(size_t keep) : keep_(keep) {}

  // The set kept for `set`, or nullptr.
  std::shared_ptr<const FileSet> Find(const Digest& set);
  // Keeps `files` as `set` (replacing nothing already kept) and returns
  // the kept set.
  std::shared_ptr<const FileSet> Keep(const Digest& set, FileSet files);

 private:
  const size_t keep_;
  absl::Mutex mu_;
  absl::flat_hash_map<Digest, std::shared_ptr<const FileSet>> sets_
      ABSL_GUARDED_BY(mu_);
  std::deque<Digest> order_ ABSL_GUARDED_BY(mu_);  // least recent first
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_KEPT_FILE_SETS_H_
