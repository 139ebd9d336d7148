#ifndef JITCACHE_SERVER_BUILD_INCLUDE_TREE_H_
#define JITCACHE_SERVER_BUILD_INCLUDE_TREE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
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
// The directory is removed when the tree is destroyed. Not thread-safe;
// one per compile.
// /dev/shm where it is a writable directory (memory: laying out CUB's 700
// headers takes 20 ms there, and can take half a second on a disk), else
// $TMPDIR, else /tmp.
std::string DefaultScratchDir();

class IncludeTree {
 public:
  // Writes `job`'s included files under `parent` and rewrites its options;
  // a job with no user include directories is left as it is (nullptr).
  static absl::StatusOr<std::unique_ptr<IncludeTree>> Apply(
      const std::string& parent, CompileJob* job);

  ~IncludeTree();
  IncludeTree(const IncludeTree&) = delete;
  IncludeTree& operator=(const IncludeTree&) = delete;

  const std::string& root() const { return root_; }

 private:
  explicit IncludeTree(std::string root) : root_(std::move(root)) {}

  std::string root_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_INCLUDE_TREE_H_
