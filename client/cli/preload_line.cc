#include "client/cli/preload_line.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>

#include "client/cli/cli_args.h"

namespace jitcache::cli {
namespace {

// This program's directory, resolved ("" if unknown).
std::string ProgramDir() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "";
  const std::string self(path, n);
  return self.substr(0, self.rfind('/'));
}

bool IsRealFile(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::optional<std::string> DropInRoot(
    const std::string& program_dir,
    const std::vector<std::string>& candidates) {
  for (const std::string& candidate : candidates) {
    char resolved[PATH_MAX];
    const std::string path = program_dir + "/" + candidate;
    if (realpath(path.c_str(), resolved) == nullptr) continue;
    const std::string root = resolved;
    if (IsRealFile(root + "/lib64/libnvrtc.so.13")) return root;
  }
  return std::nullopt;
}

int Preload() {
  // Installed: <prefix>/bin/jitcache beside <prefix>/LIBDIR/jitcache/cuda;
  // in the build tree: build/client/jitcache beside build/cuda-root.
  const std::vector<std::string> candidates = {JITCACHE_CUDA_ROOT_FROM_BIN,
                                               "../cuda-root"};
  const std::string dir = ProgramDir();
  std::optional<std::string> root = DropInRoot(dir, candidates);
  if (!root.has_value()) {
    std::cerr << "jitcache: preload: no drop-in libraries beside " << dir
              << " (looked for " << dir << "/" << candidates[0]
              << "/lib64/libnvrtc.so.13); install jitcache "
                 "(cmake --install, or the jitcache package)\n";
    return kExitFailure;
  }
  std::string line = "LD_PRELOAD=";
  bool first = true;
  for (const char* lib : {"/lib64/libnvrtc.so.13", "/lib64/libnvJitLink.so.13",
                          "/nvvm/lib64/libnvvm.so.4"}) {
    if (!IsRealFile(*root + lib)) continue;
    if (!first) line += ':';
    line += *root + lib;
    first = false;
  }
  std::cout << line << "\n";
  return 0;
}

}  // namespace jitcache::cli
