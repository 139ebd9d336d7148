#include "server/build/ptxas_run.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/fd_io.h"
#include "common/file_stamp.h"
#include "common/resolve_path.h"

namespace jitcache {
namespace {

absl::Status Errno(absl::string_view what, absl::string_view path) {
  return absl::FailedPreconditionError(
      absl::StrCat("ptxas ", path, ": ", what, ": ", std::strerror(errno)));
}

// The PT_INTERP of a 64-bit ELF executable open at `fd`; "" for a static
// one.
absl::StatusOr<std::string> Interpreter(int fd, const std::string& path) {
  Elf64_Ehdr header;
  if (pread(fd, &header, sizeof(header), 0) != sizeof(header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_phentsize != sizeof(Elf64_Phdr)) {
    return absl::FailedPreconditionError(
        absl::StrCat("ptxas ", path, ": not a 64-bit ELF executable"));
  }
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr program;
    if (pread(fd, &program, sizeof(program),
              static_cast<off_t>(header.e_phoff + i * sizeof(program))) !=
        sizeof(program)) {
      return Errno("read program headers", path);
    }
    if (program.p_type != PT_INTERP) continue;
    std::string interpreter(program.p_filesz, '\0');
    if (program.p_filesz == 0 || program.p_filesz > 4096 ||
        pread(fd, interpreter.data(), interpreter.size(),
              static_cast<off_t>(program.p_offset)) !=
            static_cast<ssize_t>(interpreter.size())) {
      return Errno("read its interpreter", path);
    }
    interpreter.resize(std::strlen(interpreter.c_str()));
    return interpreter;
  }
  return std::string();
}

std::string ReadAll(int fd) {
  std::string out;
  char buffer[1 << 16];
  off_t at = 0;
  while (true) {
    const ssize_t n = pread(fd, buffer, sizeof(buffer), at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<size_t>(n));
    at += n;
  }
}

// ptxas's own words when an allocation fails: a limit of this worker's,
// which the caller's ptxas would not meet.
bool RanOutOfMemory(const std::string& stderr_bytes) {
  return absl::StrContains(stderr_bytes, "Memory allocation failure") ||
         absl::StrContains(stderr_bytes, "out of memory") ||
         absl::StrContains(stderr_bytes, "Out of memory");
}

}  // namespace

absl::StatusOr<PtxasBinaries> OpenPtxasBinaries(
    const std::vector<std::string>& paths) {
  PtxasBinaries binaries;
  for (size_t i = 0; i < paths.size(); ++i) {
    // Its slot stays empty when it cannot be used (removed or replaced
    // since the daemon hashed it): its jobs fail, the worker's others run.
    binaries.paths.push_back(paths[i]);
    const int at = kFirstPtxasFd + static_cast<int>(i);
    const int fd = open(paths[i].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      binaries.unusable.push_back(Errno("open", paths[i]).ToString());
      continue;
    }
    if (fd != at) {
      const bool moved = dup3(fd, at, O_CLOEXEC) == at;
      close(fd);
      if (!moved) return Errno("dup3", paths[i]);
    }
    absl::StatusOr<std::string> interpreter = Interpreter(at, paths[i]);
    if (!interpreter.ok()) {
      close(at);
      binaries.unusable.push_back(interpreter.status().ToString());
      continue;
    }
    if (interpreter->empty()) continue;
    std::string error;
    std::optional<std::string> resolved =
        ResolvePath(*interpreter, &binaries.loader_links, &error);
    if (!resolved.has_value()) return absl::FailedPreconditionError(error);
    const std::string dir =
        std::filesystem::path(*resolved).parent_path().string();
    bool known = false;
    for (const std::string& d : binaries.loader_dirs) known |= d == dir;
    if (!known) binaries.loader_dirs.push_back(dir);
  }
  return binaries;
}

namespace {

// The descriptor of the registered binary `job` names, still the file the
// daemon hashed.
absl::StatusOr<int> RegisteredBinary(const PtxasJob& job,
                                     const PtxasBinaries& binaries) {
  int exec_fd = -1;
  for (size_t i = 0; i < binaries.paths.size(); ++i) {
    if (binaries.paths[i] == job.ptxas.path) {
      exec_fd = kFirstPtxasFd + static_cast<int>(i);
    }
  }
  struct stat st;
  if (exec_fd < 0 || fstat(exec_fd, &st) != 0 ||
      !(StampOf(st) == job.ptxas.stamp)) {
    return absl::FailedPreconditionError(
        absl::StrCat("ptxas ", job.ptxas.path,
                     " is not the binary the daemon registered (changed or "
                     "replaced since it started)"));
  }
  return exec_fd;
}

// The output's directory, as the caller has it: a directory this view
// cannot write (inside the toolkit) would fail where the caller's would
// not, so the job is not run.
absl::Status CheckOutputWritable(const PtxasJob& job) {
  const std::filesystem::path parent =
      std::filesystem::path(job.output_path).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (access(parent.c_str(), W_OK) != 0 ||
      std::filesystem::exists(job.output_path, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ptxas output ", job.output_path, " cannot be written in the view"));
  }
  return absl::OkStatus();
}

// A run's standard streams: memory files, closed with it.
struct RunStreams {
  int in = memfd_create("ptxas-stdin", MFD_CLOEXEC);
  int out = memfd_create("ptxas-stdout", MFD_CLOEXEC);
  int err = memfd_create("ptxas-stderr", MFD_CLOEXEC);
  RunStreams() = default;
  RunStreams(const RunStreams&) = delete;
  RunStreams& operator=(const RunStreams&) = delete;
  ~RunStreams() {
    for (int fd : {in, out, err}) {
      if (fd >= 0) close(fd);
    }
  }
  bool ok() const { return in >= 0 && out >= 0 && err >= 0; }
};

// Runs the binary at `exec_fd` with the job's arguments, no environment
// and nothing of the worker's; its wait status.
absl::StatusOr<int> RunBinary(const PtxasJob& job, int exec_fd,
                              const RunStreams& streams) {
  std::vector<std::string> argv_storage = {job.program};
  argv_storage.insert(argv_storage.end(), job.arguments.begin(),
                      job.arguments.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};
  const pid_t job_process = getpid();
  const pid_t child = fork();
  if (child < 0) return Errno("fork", job.ptxas.path);
  if (child == 0) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != job_process) {
      _exit(127);
    }
    dup2(streams.in, 0);
    dup2(streams.out, 1);
    dup2(streams.err, 2);
    // Nothing of the worker's (its socket to the daemon) reaches ptxas.
    syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
    syscall(SYS_execveat, exec_fd, "", argv.data(), envp, AT_EMPTY_PATH);
    const char message[] = "jitcache-worker: execveat of ptxas failed\n";
    [[maybe_unused]] ssize_t n = write(2, message, sizeof(message) - 1);
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// What a run that ended with `status` answers: its exit status, streams
// and output file; an error for a run that says nothing of the program
// (a signal, no start, out of memory).
absl::StatusOr<ActionResult> AnswerOfRun(const PtxasJob& job, int status,
                                         const RunStreams& streams) {
  ActionResult result;
  result.log = ReadAll(streams.err);
  v1::PtxasRun run;
  run.set_stdout(ReadAll(streams.out));
  if (WIFSIGNALED(status)) {
    return absl::InternalError(absl::StrCat(
        "ptxas died of signal ", WTERMSIG(status), " on this program"));
  }
  const int exit_status = WEXITSTATUS(status);
  if (exit_status == 127 &&
      absl::StrContains(result.log, "execveat of ptxas failed")) {
    return absl::InternalError("ptxas could not be started in the view");
  }
  if (exit_status != 0 && RanOutOfMemory(result.log)) {
    return absl::ResourceExhaustedError(
        "ptxas ran out of memory in its worker");
  }
  run.set_exit_status(exit_status);
  const int written = open(job.output_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (written >= 0) {
    run.set_output_written(true);
    result.object = ReadAll(written);
    close(written);
  }
  result.ok = true;
  result.ptxas_run = std::move(run);
  return result;
}

}  // namespace

absl::StatusOr<ActionResult> RunPtxas(const PtxasJob& job,
                                      const PtxasBinaries& binaries) {
  absl::StatusOr<int> exec_fd = RegisteredBinary(job, binaries);
  if (!exec_fd.ok()) return exec_fd.status();
  if (absl::Status s = PlaceSources(job.sources); !s.ok()) return s;
  if (absl::Status s = CheckOutputWritable(job); !s.ok()) return s;
  const RunStreams streams;
  if (!streams.ok()) return Errno("memfd_create", "streams");
  const absl::Time start = absl::Now();
  absl::StatusOr<int> status = RunBinary(job, *exec_fd, streams);
  if (!status.ok()) return status.status();
  const absl::Duration elapsed = absl::Now() - start;
  absl::StatusOr<ActionResult> result = AnswerOfRun(job, *status, streams);
  if (result.ok()) result->elapsed = elapsed;
  return result;
}

}  // namespace jitcache
