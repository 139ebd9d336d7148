#ifndef JITCACHE_SERVER_BUILD_COMPILE_VIEW_H_
#define JITCACHE_SERVER_BUILD_COMPILE_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/resolve_path.h"

namespace jitcache {

// The file system a compile sees: the toolkit, and exactly the files its
// request carried, each at its own absolute path, with the caller's working
// directory as its own. Nothing else of the daemon's disk is there, so a
// compile reads only what its key holds; names, -I paths and line
// information come out as NVRTC writes them in the caller's place.
struct CompileView {
  // The directories that stay visible, read-only, at their own paths (the
  // toolkit's canonical root), and the symbolic links that lead to them
  // (link path, target as readlink gives it: /usr/local/cuda -> ...).
  std::vector<std::string> toolkit_dirs;
  std::vector<PathLink> toolkit_links;
};

// One file a view holds: its absolute path, its bytes and, when set, the
// modification time it is given (the caller's, which NVRTC writes into line
// information).
struct ViewFile {
  std::string path;
  absl::string_view bytes;
  std::optional<int64_t> mtime_ns;
};

// The toolkit part of the view for a toolkit at `cuda_root` (as configured,
// possibly through symbolic links): its canonical directory, and each link
// on the way to it.
absl::StatusOr<CompileView> ToolkitView(const std::string& cuda_root);

// Enters a view in this process, which must be single-threaded and is
// changed for good (a forked child that runs one compile): a new user and
// mount namespace, a fresh tmpfs as the root, the toolkit bound into it,
// `files` written (with their times, where given), `working_directory`
// (absolute; empty: "/") made and entered. An error names the step that failed.
absl::Status EnterCompileView(const CompileView& view,
                              const std::string& working_directory,
                              const std::vector<ViewFile>& files);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_COMPILE_VIEW_H_
