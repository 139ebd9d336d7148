#include "server/engine/sealed_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/fd_io.h"

namespace jitcache {

std::atomic<uint64_t> SealedFile::live_bytes_{0};
std::atomic<uint64_t> SealedFile::live_files_{0};

std::shared_ptr<const SealedFile> SealedFile::Create(std::string_view bytes,
                                                     uint64_t max_live_bytes,
                                                     bool* at_limit) {
  // Reserved first, so that racing callers cannot pass the bounds together.
  const uint64_t files = live_files_.fetch_add(1) + 1;
  const uint64_t total = live_bytes_.fetch_add(bytes.size()) + bytes.size();
  *at_limit = files > kMaxLiveFiles || total > max_live_bytes;
  if (*at_limit) {
    live_files_.fetch_sub(1);
    live_bytes_.fetch_sub(bytes.size());
    return nullptr;
  }
  const int fd =
      memfd_create("jitcache-answer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    live_files_.fetch_sub(1);
    live_bytes_.fetch_sub(bytes.size());
    return nullptr;
  }
  // The seals before any descriptor leaves: F_SEAL_WRITE needs no
  // writable mapping to exist, and there is none.
  constexpr int kSeals =
      F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
  if (!WriteFully(fd, bytes.data(), bytes.size()) ||
      fcntl(fd, F_ADD_SEALS, kSeals) != 0) {
    close(fd);
    live_files_.fetch_sub(1);
    live_bytes_.fetch_sub(bytes.size());
    return nullptr;
  }
  return std::shared_ptr<const SealedFile>(new SealedFile(fd, bytes.size()));
}

SealedFile::~SealedFile() {
  live_files_.fetch_sub(1);
  live_bytes_.fetch_sub(size_);
  close(fd_);
}

}  // namespace jitcache
