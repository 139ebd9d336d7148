#ifndef JITCACHE_SERVER_ENGINE_SEALED_FILE_H_
#define JITCACHE_SERVER_ENGINE_SEALED_FILE_H_

// A large answer as a sealed memory file (memfd), handed to a caller with
// its descriptor over the framed socket instead of copied through it: the
// caller maps the bytes, and nothing is copied twice through the kernel.
// Sealed against writing, shrinking, growing and further seals before any
// descriptor leaves the daemon, so that no holder of one (a hostile
// client) can change what another caller or the store gets; the pages
// live while the daemon or a caller holds the file, and the daemon
// counts the bytes of those it holds (LiveBytes).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace jitcache {

class SealedFile {
 public:
  // At most this many live at once: each holds a descriptor of the
  // daemon's (as does every caller's copy in flight).
  static constexpr uint64_t kMaxLiveFiles = 256;

  // nullptr when the kernel refuses (no memfd, no memory), or when the
  // files alive would pass kMaxLiveFiles or `max_live_bytes` in all
  // (`*at_limit` then true): the caller sends the bytes instead.
  static std::shared_ptr<const SealedFile> Create(std::string_view bytes,
                                                  uint64_t max_live_bytes,
                                                  bool* at_limit);
  ~SealedFile();
  SealedFile(const SealedFile&) = delete;
  SealedFile& operator=(const SealedFile&) = delete;

  int fd() const { return fd_; }
  size_t size() const { return size_; }

  // The bytes of every SealedFile the daemon holds now.
  static uint64_t LiveBytes() { return live_bytes_.load(); }

 private:
  SealedFile(int fd, size_t size) : fd_(fd), size_(size) {}
  const int fd_;
  const size_t size_;
  static std::atomic<uint64_t> live_bytes_;
  static std::atomic<uint64_t> live_files_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_SEALED_FILE_H_
