#include "server/build/compile_view.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/fd_io.h"

namespace jitcache {
namespace {

// Where the new root is built before the process enters it. Any directory
// would do: the mount is private to this process's namespace.
constexpr char kStage[] = "/tmp";

absl::Status Errno(absl::string_view what, absl::string_view path = "") {
  return absl::InternalError(absl::StrCat("compile view: ", what, " ", path,
                                          ": ", std::strerror(errno)));
}

absl::Status WriteText(const char* path, absl::string_view text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path);
  const bool ok = WriteFully(fd, text.data(), text.size());
  close(fd);
  return ok ? absl::OkStatus() : Errno("write", path);
}

// mkdir -p of `path` under `root` ("": the current root).
absl::Status MakeDirs(const std::string& root, const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(root + path, ec);
  if (ec && !std::filesystem::is_directory(root + path)) {
    return absl::InternalError(
        absl::StrCat("compile view: mkdir ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// A read-only bind of `dir` at its own path in the stage. The flags the
// source mount has locked (nosuid, nodev, noexec) must be kept to remount.
absl::Status BindReadOnly(const std::string& dir) {
  if (absl::Status s = MakeDirs(kStage, dir); !s.ok()) return s;
  const std::string target = kStage + dir;
  if (mount(dir.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) !=
      0) {
    return Errno("bind", dir);
  }
  struct statvfs vfs;
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
  if (statvfs(dir.c_str(), &vfs) == 0) {
    if (vfs.f_flag & ST_NOSUID) flags |= MS_NOSUID;
    if (vfs.f_flag & ST_NODEV) flags |= MS_NODEV;
    if (vfs.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  }
  if (mount(nullptr, target.c_str(), nullptr, flags, nullptr) != 0) {
    return Errno("remount read-only", dir);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CompileView> ToolkitView(const std::string& cuda_root) {
  CompileView view;
  std::string error;
  std::optional<std::string> root =
      ResolvePath(std::filesystem::absolute(cuda_root).string(),
                  &view.toolkit_links, &error);
  if (!root.has_value()) return absl::FailedPreconditionError(error);
  view.toolkit_dirs.push_back(*root);
  // Links inside the toolkit (lib64 -> targets/...) come with the bind.
  return view;
}

absl::Status EnterCompileView(const CompileView& view,
                              const std::string& working_directory,
                              const std::vector<ViewFile>& files) {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    return Errno("unshare(CLONE_NEWUSER | CLONE_NEWNS)");
  }
  for (absl::Status s :
       {WriteText("/proc/self/setgroups", "deny"),
        WriteText("/proc/self/uid_map", absl::StrCat(uid, " ", uid, " 1\n")),
        WriteText("/proc/self/gid_map", absl::StrCat(gid, " ", gid, " 1\n"))}) {
    if (!s.ok()) return s;
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Errno("make / private");
  }
  if (mount("jitcache-compile", kStage, "tmpfs", MS_NOSUID | MS_NODEV,
            "mode=0755") != 0) {
    return Errno("mount tmpfs on", kStage);
  }
  for (const std::string& dir : view.toolkit_dirs) {
    if (absl::Status s = BindReadOnly(dir); !s.ok()) return s;
  }
  // Links and files are made inside the new root, never through the
  // stage: a link's absolute target (/usr/local/cuda -> /usr/local/cuda-13.0)
  // would lead out of the stage to the daemon's own file system, where a
  // file named inside the toolkit would then be written. Inside, the same
  // target leads to the read-only bind, and such a file fails.
  if (chroot(kStage) != 0) return Errno("chroot");
  if (chdir("/") != 0) return Errno("chdir", "/");
  for (const auto& [path, target] : view.toolkit_links) {
    if (absl::Status s = MakeDirs("", Parent(path)); !s.ok()) return s;
    if (symlink(target.c_str(), path.c_str()) != 0 && errno != EEXIST) {
      return Errno("symlink", path);
    }
  }
  for (const ViewFile& file : files) {
    const std::string& path = file.path;
    if (absl::Status s = MakeDirs("", Parent(path)); !s.ok()) return s;
    const int fd =
        open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
             0644);
    if (fd < 0) return Errno("create", path);
    bool ok = WriteFully(fd, file.bytes.data(), file.bytes.size());
    if (ok && file.mtime_ns.has_value()) {
      // NVRTC stats what it reads and writes the time into line
      // information: the caller's, not the moment the view was made.
      int64_t seconds = *file.mtime_ns / 1'000'000'000;
      int64_t nanos = *file.mtime_ns % 1'000'000'000;
      if (nanos < 0) {  // before 1970
        --seconds;
        nanos += 1'000'000'000;
      }
      const struct timespec times[2] = {
          {0, UTIME_OMIT},
          {static_cast<time_t>(seconds), static_cast<long>(nanos)}};
      ok = futimens(fd, times) == 0;
    }
    close(fd);
    if (!ok) return Errno("write", path);
  }
  const std::string cwd = working_directory.empty() ? "/" : working_directory;
  if (absl::Status s = MakeDirs("", cwd); !s.ok()) return s;
  if (chdir(cwd.c_str()) != 0) return Errno("chdir", cwd);
  return absl::OkStatus();
}

}  // namespace jitcache
