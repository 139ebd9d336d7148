#ifndef JITCACHE_SERVER_BUILD_INCLUDE_TREE_H_
#define JITCACHE_SERVER_BUILD_INCLUDE_TREE_H_

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/digest.h"
#include "server/build/compiler.h"

namespace jitcache {

// The files a request includes from its own -I directories, written from
// the request (the daemon never reads a user's files) under a fresh private
// directory ROOT, each at ROOT + its absolute path, and the job's -I
// options pointed there: NVRTC then finds exactly those files, relative
// #includes between them work as on the client, and a file the client did
// not send is not found, as it was not on the client. Each file has a
// #line naming its real path (after its include guard, where it opens with
// one), so that __FILE__, diagnostics and line information name the
// client's file, not ROOT.
//
// The directory is removed when the tree is destroyed. Apply may be called
// from many threads at once; a tree is shared by every compile of its set
// of files (IncludeTrees).

// /dev/shm where it is a writable directory (memory: laying out CUB's 700
// headers takes 20 ms there, and can take half a second on a disk), else
// $TMPDIR, else /tmp.
std::string DefaultScratchDir();

class IncludeTree {
 public:
  using Files = std::vector<std::pair<std::string, std::string>>;  // path,
                                                                   // bytes

  // Writes `files` under a new directory in `parent`.
  static absl::StatusOr<std::unique_ptr<IncludeTree>> Write(
      const std::string& parent, const Files& files);

  // Points `job`'s -I options naming `dirs` (the request's own, outside the
  // toolkit) into the tree; each exists there, as on the client, even one
  // nothing came from.
  absl::Status Apply(const std::vector<std::string>& dirs,
                     CompileJob* job) const;

  ~IncludeTree();
  IncludeTree(const IncludeTree&) = delete;
  IncludeTree& operator=(const IncludeTree&) = delete;

 private:
  explicit IncludeTree(std::string root) : root_(std::move(root)) {}

  std::string root_;
};

// Laid-out trees kept by the digest of their set of files, so that the next
// miss with the same files (another kernel including the same headers, or
// the same one for another architecture or -D) needs neither their bytes
// from the client nor a new layout. At most `keep` are kept, the least
// recently used going first; a tree in use lives until its compile ends.
// Thread-safe.
class IncludeTrees {
 public:
  IncludeTrees(std::string scratch_dir, size_t keep)
      : scratch_dir_(std::move(scratch_dir)), keep_(keep) {}

  // The tree kept for `set`, or nullptr.
  std::shared_ptr<const IncludeTree> Find(const Digest& set);
  // The tree for `set`: the kept one, else `files` laid out and kept.
  absl::StatusOr<std::shared_ptr<const IncludeTree>> Make(
      const Digest& set, const IncludeTree::Files& files);

 private:
  const std::string scratch_dir_;
  const size_t keep_;
  absl::Mutex mu_;
  absl::flat_hash_map<Digest, std::shared_ptr<const IncludeTree>> trees_
      ABSL_GUARDED_BY(mu_);
  std::deque<Digest> order_ ABSL_GUARDED_BY(mu_);  // least recent first
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_INCLUDE_TREE_H_
