#ifndef JITCACHE_CLIENT_INCLUDE_SCAN_CHANGE_WATCH_H_
#define JITCACHE_CLIENT_INCLUDE_SCAN_CHANGE_WATCH_H_

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace jitcache::internal {

// Says in one system call that nothing an include scan depends on has
// changed, from the kernel's inotify events, where checking the stamp of
// every file (700 of them for a CuPy program) costs a millisecond.
//
// Watch the directories of a scan's files and the directories where it
// found paths absent, then check their stamps once; from then on, while
// Changes() returns the number it returned before that check, nothing in
// them was created, written, renamed, removed or had its attributes
// changed, and no directory on the way to them was renamed or removed
// (those are watched for the one name that leads on). Any event it cannot
// place (a full event queue, a watch the kernel dropped) counts as a
// change. It trusts only local file systems, whose every change passes
// through this kernel (ext4, xfs, btrfs, tmpfs, overlay, zfs, f2fs):
// elsewhere (NFS, FUSE, ...) Watch refuses and callers check stamps.
// A forked child starts over with its own inotify instance (a shared one
// would let one process consume the other's events); so does a process
// whose user has no inotify instances or watches left, by refusing.
//
// Thread-safety: all members may be called from any thread.
class ChangeWatch {
 public:
  ChangeWatch() = default;
  ~ChangeWatch();
  ChangeWatch(const ChangeWatch&) = delete;
  ChangeWatch& operator=(const ChangeWatch&) = delete;

  // Watches the directories of `files` and the directories `dirs`
  // (absolute, lexically normal) in full, and every directory above them
  // for the name that leads to them. A directory that does not exist (where
  // a header was found absent) is watched from the nearest one above it
  // that does: its appearing is a change there. False when any cannot be
  // watched.
  bool Watch(const std::vector<std::string>& files,
             const std::vector<std::string>& dirs);
  // How many relevant changes have been seen, after reading the events
  // that have arrived.
  uint64_t Changes();

 private:
  struct Watched {
    int wd = -1;
    bool whole = false;                     // every name in it matters
    std::unordered_set<std::string> names;  // else these only
  };
  enum class Added { kWatched, kMissing, kRefused };
  // Adds `dir` as a whole directory (`name` empty) or for `name`; kMissing
  // when it does not exist.
  Added Add(const std::string& dir, const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Forget(int wd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Drain() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts over in a forked child; opens the instance on first use.
  bool Ready() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  pid_t pid_ ABSL_GUARDED_BY(mu_) = 0;  // whose instance fd_ is
  uint64_t changes_ ABSL_GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, Watched> by_dir_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<int, std::string> by_wd_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_INCLUDE_SCAN_CHANGE_WATCH_H_
