#include "server/build/ptxas_registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"

namespace jitcache {

absl::StatusOr<ToolchainInfo::Library> HashToolkitFile(const std::string& path,
                                                       absl::string_view flag,
                                                       bool executable) {
  std::error_code ec;
  const std::string resolved = std::filesystem::canonical(path, ec).string();
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat(flag, " ", path, ": ", ec.message()));
  }
  const int fd = open(resolved.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(flag, " ", path, ": ", std::strerror(errno)));
  }
  struct stat before;
  struct stat after;
  Sha256 hasher;
  bool read_all = fstat(fd, &before) == 0;
  if (read_all && (!S_ISREG(before.st_mode) ||
                   (executable && (before.st_mode & 0111) == 0))) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        flag, " ", path,
        executable ? ": not an executable file" : ": not a regular file"));
  }
  char buffer[1 << 16];
  while (read_all) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      read_all = n == 0;
      break;
    }
    hasher.Update(buffer, static_cast<size_t>(n));
  }
  read_all =
      read_all && fstat(fd, &after) == 0 && StampOf(before) == StampOf(after);
  close(fd);
  if (!read_all) {
    return absl::FailedPreconditionError(absl::StrCat(
        flag, " ", path, ": could not be read whole, or changed meanwhile"));
  }
  ToolchainInfo::Library ptxas;
  ptxas.name = "ptxas";
  ptxas.path = resolved;
  ptxas.stamp = StampOf(before);
  const Sha256::Digest digest = hasher.Finish();
  ptxas.sha256.assign(reinterpret_cast<const char*>(digest.data()),
                      digest.size());
  return ptxas;
}

absl::StatusOr<std::vector<ToolchainInfo::Library>> RegisterPtxas(
    const std::string& cuda_root, const std::vector<std::string>& registered) {
  std::vector<ToolchainInfo::Library> out;
  auto add = [&](const ToolchainInfo::Library& ptxas) {
    for (const ToolchainInfo::Library& known : out) {
      if (known.path == ptxas.path) return;
    }
    out.push_back(ptxas);
  };
  const std::string toolkit = cuda_root + "/bin/ptxas";
  if (access(toolkit.c_str(), X_OK) == 0) {
    absl::StatusOr<ToolchainInfo::Library> ptxas =
        HashToolkitFile(toolkit, "--ptxas", /*executable=*/true);
    if (!ptxas.ok()) return ptxas.status();
    add(*ptxas);
  }
  for (const std::string& path : registered) {
    absl::StatusOr<ToolchainInfo::Library> ptxas =
        HashToolkitFile(path, "--ptxas", /*executable=*/true);
    if (!ptxas.ok()) return ptxas.status();
    add(*ptxas);
  }
  return out;
}

}  // namespace jitcache
