#ifndef JITCACHE_CLIENT_WIRE_REAL_LIBRARY_H_
#define JITCACHE_CLIENT_WIRE_REAL_LIBRARY_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_stamp.h"

namespace jitcache {

// The toolkit's own copy of a library that jitcache stands in for
// (libnvrtc.so.13, libnvJitLink.so.13, libnvvm.so.4), opened by path:
// $ENV_VAR, else $CUDA_HOME/TOOLKIT_DIR/FILE_NAME, else
// /usr/local/cuda/TOOLKIT_DIR/FILE_NAME. Never by bare name, which would find
// the stand-in again; where that path is the stand-in itself (CUDA_HOME
// names the toolkit-shaped directory it is installed in), the toolkit that
// directory links to. nullptr, with a line on stderr, when it cannot be
// opened. Thread-safe; each call opens (dlopen counts references), so
// callers keep the handle.
void* OpenRealLibrary(const char* env_var, const char* file_name,
                      const char* toolkit_dir = "lib64");

// The path OpenRealLibrary opens.
std::string RealLibraryPath(const char* env_var, const char* file_name,
                            const char* toolkit_dir = "lib64");

// A library the daemon says it loads (PingResponse.libraries).
struct DaemonLibrary {
  std::string_view name;  // "libnvJitLink.so.13"
  std::string_view path;
  FileStamp stamp;
};

// The one check that the daemon answers for the very file this process
// would open as the real library (RealLibraryPath's): the index of
// `file_name` in `daemon_libraries` when its stamp holds for that path;
// nullopt, with why not in `why` (for the front ends' verbose lines),
// when the daemon loads another file or does not say which.
std::optional<size_t> SameRealLibrary(
    const std::vector<DaemonLibrary>& daemon_libraries, const char* env_var,
    const char* file_name, const char* toolkit_dir, std::string* why);

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_WIRE_REAL_LIBRARY_H_
