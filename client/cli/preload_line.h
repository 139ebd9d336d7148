#ifndef JITCACHE_CLIENT_CLI_PRELOAD_LINE_H_
#define JITCACHE_CLIENT_CLI_PRELOAD_LINE_H_

#include <optional>
#include <string>
#include <vector>

namespace jitcache::cli {

// The toolkit-shaped directory the drop-in libraries are installed in
// (cmake/JitcachePackaging.cmake, deploy/make-cuda-root), found from this
// program's own place: `candidates` relative to its directory, the first
// that holds lib64/libnvrtc.so.13 as a real file. nullopt if none does.
std::optional<std::string> DropInRoot(
    const std::string& program_dir, const std::vector<std::string>& candidates);

// `jitcache preload`: prints the LD_PRELOAD= line that puts the drop-ins
// (libnvrtc.so.13, libnvJitLink.so.13, libnvvm.so.4) in front of an
// unmodified program, from their toolkit-shaped directory. Exit status 0,
// or 3 (with why on stderr) when no such directory is beside this program.
int Preload();

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_PRELOAD_LINE_H_
