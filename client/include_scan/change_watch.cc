#include "client/include_scan/change_watch.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace jitcache::internal {
namespace {

// Local file systems: every change to them is made by this kernel, which
// reports it. (Network and FUSE file systems change behind its back.)
bool ReportsEveryChange(const std::string& dir) {
  struct statfs fs;
  if (statfs(dir.c_str(), &fs) != 0) return false;
  switch (static_cast<uint64_t>(fs.f_type)) {
    case 0xEF53:      // ext2/3/4
    case 0x58465342:  // xfs
    case 0x9123683E:  // btrfs
    case 0x01021994:  // tmpfs
    case 0x858458F6:  // ramfs
    case 0x794C7630:  // overlay
    case 0x2FC12FC1:  // zfs
    case 0xF2F52010:  // f2fs
      return true;
    default:
      return false;
  }
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

constexpr uint32_t kSelf = IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
// A directory whose every name matters: anything done to what it holds.
constexpr uint32_t kWhole = kSelf | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE |
                            IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;
// A directory on the way: only its names being replaced.
constexpr uint32_t kOnTheWay =
    kSelf | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB;

}  // namespace

ChangeWatch::~ChangeWatch() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0 && getpid() == pid_) close(fd_);
}

bool ChangeWatch::Ready() {
  if (fd_ >= 0 && getpid() != pid_) {
    // A forked child: the instance is shared with the parent. Closing the
    // child's descriptor leaves the parent's.
    close(fd_);
    fd_ = -1;
    by_dir_.clear();
    by_wd_.clear();
    ++changes_;
  }
  if (fd_ < 0) {
    fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    pid_ = getpid();
  }
  return fd_ >= 0;
}

ChangeWatch::Added ChangeWatch::Add(const std::string& dir,
                                    const std::string& name) {
  auto it = by_dir_.find(dir);
  if (it != by_dir_.end()) {
    Watched& w = it->second;
    if (w.whole) return Added::kWatched;
    if (!name.empty()) {
      w.names.insert(name);
      return Added::kWatched;
    }
    // Now wanted whole: the same watch, with the wider mask.
    if (inotify_add_watch(fd_, dir.c_str(), kWhole | IN_MASK_ADD) != w.wd) {
      return Added::kRefused;
    }
    w.whole = true;
    return Added::kWatched;
  }
  // Missing: nothing at all by that name (lstat: a dangling link is
  // something, whose target could appear where no watch would see it).
  if (struct stat st; lstat(dir.c_str(), &st) != 0) {
    return errno == ENOENT || errno == ENOTDIR ? Added::kMissing
                                               : Added::kRefused;
  }
  if (!ReportsEveryChange(dir)) return Added::kRefused;
  // IN_MASK_ADD: the same directory may be watched already by another
  // name (through a symbolic link), whose mask must not narrow.
  const int wd = inotify_add_watch(
      fd_, dir.c_str(), (name.empty() ? kWhole : kOnTheWay) | IN_MASK_ADD);
  if (wd < 0) return Added::kRefused;
  Watched w;
  w.wd = wd;
  w.whole = name.empty();
  if (!name.empty()) w.names.insert(name);
  if (auto old = by_wd_.find(wd); old != by_wd_.end()) {
    // The same directory by another name: one watch, wanted for what
    // either name wanted.
    if (auto other = by_dir_.find(old->second); other != by_dir_.end()) {
      w.whole = w.whole || other->second.whole;
      w.names.merge(other->second.names);
      by_dir_.erase(other);
    }
  }
  by_dir_[dir] = std::move(w);
  by_wd_[wd] = dir;
  return Added::kWatched;
}

bool ChangeWatch::Watch(const std::vector<std::string>& files,
                        const std::vector<std::string>& dirs) {
  std::lock_guard<std::mutex> lock(mu_);
  if (files.empty() && dirs.empty()) return true;
  if (!Ready()) return false;
  std::unordered_set<std::string> whole(dirs.begin(), dirs.end());
  for (const std::string& file : files) whole.insert(DirName(file));
  std::vector<std::string> missing;
  for (const std::string& dir : whole) {
    const Added added = Add(dir, "");
    if (added == Added::kRefused) return false;
    if (added == Added::kMissing) missing.push_back(dir);
    // Every directory above, for the one name that leads down (those that
    // do not exist either are watched from above in turn).
    for (std::string below = dir; below != "/";) {
      const std::string above = DirName(below);
      const Added on_the_way =
          Add(above, below.substr(above == "/" ? 1 : above.size() + 1));
      if (on_the_way == Added::kRefused) return false;
      if (on_the_way == Added::kMissing) missing.push_back(above);
      below = above;
    }
  }
  // One made between its check and the watch of the directory above it
  // (they are watched from the bottom up): what it holds may have changed
  // unseen. Not watched this time; the stamps are checked instead.
  for (const std::string& dir : missing) {
    if (struct stat st; lstat(dir.c_str(), &st) == 0) return false;
  }
  return true;
}

void ChangeWatch::Forget(int wd) {
  auto it = by_wd_.find(wd);
  if (it == by_wd_.end()) return;
  by_dir_.erase(it->second);
  by_wd_.erase(it);
}

void ChangeWatch::Drain() {
  alignas(inotify_event) char buffer[16384];
  while (true) {
    const ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: nothing more has arrived
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if ((event->mask & IN_Q_OVERFLOW) != 0) {
        ++changes_;  // events were lost: anything may have changed
        continue;
      }
      auto it = by_wd_.find(event->wd);
      if (it == by_wd_.end()) continue;  // a watch already forgotten
      if ((event->mask &
           (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) != 0) {
        ++changes_;
        if ((event->mask & IN_IGNORED) == 0) inotify_rm_watch(fd_, event->wd);
        Forget(event->wd);  // watched again, by its path, when next wanted
        continue;
      }
      const Watched& w = by_dir_.at(it->second);
      if (w.whole || (event->len > 0 && w.names.contains(event->name))) {
        ++changes_;
      }
    }
  }
}

uint64_t ChangeWatch::Changes() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0 && Ready()) Drain();
  return changes_;
}

}  // namespace jitcache::internal
