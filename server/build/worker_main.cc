#include "server/build/worker_main.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/compile_place.h"
#include "common/file_stamp.h"
#include "common/length_frame.h"
#include "server/build/compile_view.h"
#include "server/build/cuda_compiler.h"
#include "server/build/nvvm_library.h"
#include "server/build/path_stats.h"
#include "server/build/ptxas_run.h"
#include "server/build/worker_protocol.h"
#include "server/build/worker_sandbox.h"

namespace jitcache {

namespace {

// One job's answer, in the child that runs it.
// The view of a ptxas job: the toolkit's, and the loader the binaries
// need.
CompileView PtxasView(const CompileView& toolkit,
                      const PtxasBinaries& binaries) {
  CompileView view = toolkit;
  view.toolkit_dirs.insert(view.toolkit_dirs.end(),
                           binaries.loader_dirs.begin(),
                           binaries.loader_dirs.end());
  view.toolkit_links.insert(view.toolkit_links.end(),
                            binaries.loader_links.begin(),
                            binaries.loader_links.end());
  return view;
}

// A compile job's files where its place puts them, with their times.
absl::StatusOr<std::vector<ViewFile>> FilesInPlace(const CompileJob& job) {
  std::vector<ViewFile> out;
  if (job.files == nullptr) return out;
  if (!job.file_mtimes_ns.empty() &&
      job.file_mtimes_ns.size() != job.files->size()) {
    return absl::InvalidArgumentError("file times do not match the files");
  }
  const CompilePlace place(job.working_directory, job.program_name);
  for (size_t i = 0; i < job.files->size(); ++i) {
    const auto& [anchored, bytes] = (*job.files)[i];
    std::optional<std::string> path = place.Absolute(anchored);
    if (!path.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("file '", anchored, "' has no place here"));
    }
    ViewFile file{*std::move(path), bytes, std::nullopt};
    if (!job.file_mtimes_ns.empty()) file.mtime_ns = job.file_mtimes_ns[i];
    out.push_back(std::move(file));
  }
  return out;
}

// A ptxas job's answer, in the child that runs it.
absl::StatusOr<ActionResult> RunPtxasJob(const v1::WorkerPtxas& request,
                                         absl::Time deadline,
                                         const CompileView& view,
                                         const PtxasBinaries& binaries) {
  absl::StatusOr<PtxasJob> job = PtxasJobFrom(request, deadline);
  if (!job.ok()) return job.status();
  if (absl::Status s = KeepCrashReportSource(); !s.ok()) return s;
  if (absl::Status s = EnterCompileView(view, job->working_directory,
                                        {{job->input_path, job->ptx, {}}});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = LockDownCompile(/*runs_ptxas=*/true); !s.ok()) {
    return s;
  }
  return RunPtxas(*job, binaries);
}

// A libNVVM job's answer, in the child that runs it: the toolkit's view
// alone (libNVVM reads no file; it was loaded before the sandbox).
absl::StatusOr<ActionResult> RunNvvmJob(const v1::WorkerNvvm& request,
                                        const CompileView& view,
                                        const NvvmLibrary* nvvm) {
  if (nvvm == nullptr) {
    return absl::FailedPreconditionError(
        "this worker loaded no libNVVM (--libnvvm)");
  }
  if (absl::Status s = KeepCrashReportSource(); !s.ok()) return s;
  if (absl::Status s = EnterCompileView(view, "", {}); !s.ok()) return s;
  if (absl::Status s = LockDownCompile(); !s.ok()) return s;
  return nvvm->Run({request.calls().begin(), request.calls().end()});
}

// What a job's child runs with: the views, the registered binaries and
// libraries, the compiler, the test hooks and the memory limit.
struct JobContext {
  const CompileView& view;
  const PtxasBinaries& binaries;
  const CompileView& ptxas_view;
  const NvvmLibrary* nvvm;
  CudaCompiler& compiler;
  const WorkerHooks& hooks;
  uint64_t memory_limit;
};

absl::StatusOr<ActionResult> RunJob(const std::string& frame,
                                    const JobContext& context) {
  const CompileView& view = context.view;
  const WorkerHooks& hooks = context.hooks;
  CudaCompiler& compiler = context.compiler;
  const uint64_t memory_limit = context.memory_limit;
  v1::WorkerRequest request;
  absl::StatusOr<ActionResult> result =
      absl::InvalidArgumentError("unreadable worker request");
  if (request.ParseFromString(frame)) {
    const absl::Time deadline =
        request.deadline_unix_us() > 0
            ? absl::FromUnixMicros(request.deadline_unix_us())
            : absl::InfiniteFuture();
    if (request.has_ptxas()) {
      return RunPtxasJob(request.ptxas(), deadline, context.ptxas_view,
                         context.binaries);
    }
    if (request.has_nvvm()) {
      return RunNvvmJob(request.nvvm(), view, context.nvvm);
    }
    // The job sees the toolkit and what its request carried, nothing else
    // (a link: the toolkit alone).
    // A link's view is the toolkit's alone: no files, no directory.
    absl::StatusOr<CompileJob> job =
        request.has_compile() ? CompileJobFrom(request.compile(), deadline)
                              : absl::StatusOr<CompileJob>(CompileJob{});
    if (!job.ok()) return job.status();
    absl::StatusOr<std::vector<ViewFile>> files = FilesInPlace(*job);
    if (!files.ok()) return files.status();
    if (absl::Status s = KeepCrashReportSource(); !s.ok()) return s;
    if (absl::Status s = EnterCompileView(view, job->working_directory, *files);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = LockDownCompile(); !s.ok()) return s;
    if (request.has_compile()) {
      std::optional<absl::StatusOr<ActionResult>> faked;
      if (hooks.compile) faked = hooks.compile(*job);
      result = faked.has_value() ? *std::move(faked) : compiler.Compile(*job);
    } else if (request.has_link()) {
      absl::StatusOr<LinkJob> link = LinkJobFrom(request.link(), deadline);
      if (!link.ok()) return link.status();
      // The sources its PTX names, as the caller's stat saw them: stats of
      // those are the caller's, of anything else the worker's.
      if (absl::Status s = PlaceSources(link->sources); !s.ok()) return s;
      link->sources_in_view = true;
      std::vector<std::string> allowed;
      for (const SourceStat& source : link->sources) {
        allowed.push_back(source.path);
      }
      AllowPathStats(std::move(allowed));
      std::optional<absl::StatusOr<ActionResult>> faked;
      if (hooks.link) faked = hooks.link(*link);
      const uint64_t stats_before = PathStatsMade().load();
      result = faked.has_value() ? *std::move(faked) : compiler.Link(*link);
      if (PathStatsMade().load() != stats_before) {
        // Not a result: errors are never kept, and the caller links it.
        return ReadsCallersFilesError();
      }
    }
  }
  if (!result.ok() && absl::IsResourceExhausted(result.status()) &&
      memory_limit > 0) {
    result = absl::ResourceExhaustedError(absl::StrCat(
        result.status().message(), " (the compile is limited to ", memory_limit,
        " bytes of address space: --compile_memory_limit)"));
  }
  return result;
}

}  // namespace

// Whether `path` still has the stamp "dev:ino:size:mtime_ns:ctime_ns".
bool LibNvvmIsTheOneHashed(const std::string& path, const std::string& stamp) {
  std::vector<std::string> parts = absl::StrSplit(stamp, ':');
  FileStamp expected;
  return parts.size() == 5 && absl::SimpleAtoi(parts[0], &expected.dev) &&
         absl::SimpleAtoi(parts[1], &expected.ino) &&
         absl::SimpleAtoi(parts[2], &expected.size) &&
         absl::SimpleAtoi(parts[3], &expected.mtime_ns) &&
         absl::SimpleAtoi(parts[4], &expected.ctime_ns) &&
         FileStampHolds(path, expected);
}

std::atomic<uint64_t>& PathStatsMade() {
  static std::atomic<uint64_t> made{0};
  return made;
}

namespace {

// Written before the link starts its threads, never after.
std::vector<std::string>& AllowedPathStats() {
  static auto* allowed = new std::vector<std::string>();
  return *allowed;
}

}  // namespace

void AllowPathStats(std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  AllowedPathStats() = std::move(paths);
}

bool PathStatAllowed(const char* path) {
  const std::vector<std::string>& allowed = AllowedPathStats();
  return !allowed.empty() &&
         std::binary_search(allowed.begin(), allowed.end(), path,
                            [](const auto& a, const auto& b) {
                              return std::string_view(a) < std::string_view(b);
                            });
}

namespace {

// What jitcached starts a worker with (worker_compiler.cc's argv).
struct WorkerArgs {
  int fd = -1;
  uint64_t memory_limit = 0;
  std::vector<std::string> include_dirs;
  std::string cuda_root;
  std::vector<std::string> ptxas;
  std::string libnvvm;
  std::string libnvvm_stamp;
};

// nullopt, with a line on stderr, for arguments that are not a worker's.
std::optional<WorkerArgs> ParseWorkerArgs(int argc, char** argv) {
  WorkerArgs out;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view given = argv[i];
    absl::string_view arg = given;
    if (absl::ConsumePrefix(&arg, "--fd=") && absl::SimpleAtoi(arg, &out.fd)) {
      continue;
    }
    arg = given;
    if (absl::ConsumePrefix(&arg, "--memory_limit=") &&
        absl::SimpleAtoi(arg, &out.memory_limit)) {
      continue;
    }
    arg = given;
    if (absl::ConsumePrefix(&arg, "--cuda_root=")) {
      out.cuda_root = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--ptxas=")) {
      out.ptxas.emplace_back(arg);
    } else if (absl::ConsumePrefix(&arg, "--libnvvm=")) {
      out.libnvvm = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--libnvvm_stamp=")) {
      out.libnvvm_stamp = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--include_dir=")) {
      out.include_dirs.emplace_back(arg);
    } else {
      std::fprintf(stderr,
                   "jitcache-worker: unknown argument %s\n"
                   "jitcache-worker is started by jitcached, not by hand\n",
                   argv[i]);
      return std::nullopt;
    }
  }
  if (out.fd < 0 || out.cuda_root.empty()) {
    std::fprintf(stderr,
                 "jitcache-worker: needs --fd=N and --cuda_root=DIR (started "
                 "by jitcached, not by hand)\n");
    return std::nullopt;
  }
  return out;
}

// The libNVVM the daemon hashed, loaded before the sandbox (and so in every
// job's child with the rest of this process: a job's view need not hold
// it); null when there is none, or when the file changed since: its answers
// would be kept under the old file's hash, so no libNVVM job is answered.
absl::StatusOr<std::unique_ptr<NvvmLibrary>> LoadLibNvvm(
    const WorkerArgs& args) {
  if (args.libnvvm.empty()) return nullptr;
  if (!LibNvvmIsTheOneHashed(args.libnvvm, args.libnvvm_stamp)) {
    std::fprintf(stderr,
                 "jitcache-worker: %s changed since jitcached started; no "
                 "libNVVM compiles until it restarts\n",
                 args.libnvvm.c_str());
    return nullptr;
  }
  return NvvmLibrary::Open(args.libnvvm);
}

// How far a job's child got with its answer, written by the child and read
// by the worker once the child has ended: a page shared across the fork.
//   kNone:     it never began to write (the compiler ended the process):
//              the worker answers for it;
//   kWriting:  it began and did not finish (or finished and ended before it
//              could say so): the frame on the socket may be partial, so
//              the worker ends and the daemon reads the end of the socket;
//   kAnswered: its whole answer is on the socket.
class AnswerProgress {
 public:
  enum State : int { kNone, kWriting, kAnswered };
  AnswerProgress()
      : page_(mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0)) {
    if (page_ != MAP_FAILED) state_ = new (page_) std::atomic<int>(kNone);
  }
  ~AnswerProgress() {
    if (page_ != MAP_FAILED) munmap(page_, sizeof(std::atomic<int>));
  }
  AnswerProgress(const AnswerProgress&) = delete;
  AnswerProgress& operator=(const AnswerProgress&) = delete;

  bool usable() const { return state_ != nullptr; }
  void Set(State state) { state_->store(state); }
  State Get() const { return static_cast<State>(state_->load()); }

 private:
  void* const page_;
  std::atomic<int>* state_ = nullptr;
};

// The answer for a job whose child ended with `status` without writing one:
// the compiler ended the process itself (libNVVM's `-Xopt -help` calls
// exit(0)). Said at once, so that the daemon frees this worker and the
// caller falls back now, not at the compile-time limit.
std::string EndedWithoutAnswer(int status) {
  v1::WorkerResponse response = ToWorkerResponse(absl::InternalError(
      absl::StrCat("the compiler ended its process (exit status ",
                   WEXITSTATUS(status), ") without an answer")));
  response.set_ended_without_answer(true);
  return response.SerializeAsString();
}

// Runs each job the daemon sends on `fd` in a child of its own, until the
// daemon closes it (0) or has gone.
int ServeJobs(int fd, const JobContext& context) {
  // A job can carry sources and objects of up to the daemon's request limit.
  constexpr size_t kMaxFrame = size_t{1} << 31;
  AnswerProgress answer;
  if (!answer.usable()) {
    std::fprintf(stderr, "jitcache-worker: mmap: %s\n", std::strerror(errno));
    return 1;
  }
  while (true) {
    std::optional<uint64_t> unused;
    std::optional<std::string> frame = ReadFrame(fd, kMaxFrame, &unused);
    if (!frame.has_value()) return 0;  // the daemon closed: done
    // This process has loaded NVRTC and nvJitLink but never compiles: each
    // job runs in a child forked from it, which answers and exits. NVRTC
    // keeps state between compiles in one process (after -restrict, later
    // compiles load through ld.global.nc; -opt-info leaks into later logs),
    // so a worker that served one user's options would change the bytes of
    // the next user's kernel.
    const pid_t worker = getpid();
    answer.Set(AnswerProgress::kNone);
    const pid_t child = fork();
    if (child < 0) {
      const absl::Status error = absl::ResourceExhaustedError(
          absl::StrCat("fork for a compile: ", std::strerror(errno)));
      if (!frame::Write(fd, ToWorkerResponse(error).SerializeAsString())) {
        return 0;
      }
      continue;
    }
    if (child == 0) {
      // The daemon kills this process at a job's deadline: the compile
      // must die with it (and not start if that already happened).
      absl::StatusOr<ActionResult> result =
          absl::InternalError("the compile could not be tied to its worker");
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() == worker) {
        result = RunJob(*frame, context);
      }
      // Exit status 1: the answer could not be written, the daemon is gone.
      const std::string response = ToWorkerResponse(result).SerializeAsString();
      answer.Set(AnswerProgress::kWriting);
      if (!frame::Write(fd, response)) _exit(1);
      answer.Set(AnswerProgress::kAnswered);
      _exit(0);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
      // The child sent its crash frame: die of the same signal, so that
      // the daemon sees what it would see from a worker compiling in
      // process (and replaces this one).
      signal(WTERMSIG(status), SIG_DFL);
      raise(WTERMSIG(status));
      _exit(128 + WTERMSIG(status));
    }
    switch (answer.Get()) {
      case AnswerProgress::kAnswered:
        continue;
      case AnswerProgress::kWriting:
        // Perhaps half a frame on the socket: nothing may follow it. The
        // daemon reads the end of the socket (the worker is gone) and
        // answers that, as it does a crash.
        return 0;
      case AnswerProgress::kNone:
        // The compiler ended the process before any answer: said now, so
        // the daemon need not wait out the job's time limit.
        if (!frame::Write(fd, EndedWithoutAnswer(status))) return 0;
        continue;
    }
  }
}

// A setup step's failure, on stderr: the worker's exit status 1.
int SetupFailed(const absl::Status& status) {
  std::fprintf(stderr, "jitcache-worker: %s\n",
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int RunWorker(int argc, char** argv, const WorkerHooks& hooks) {
  std::optional<WorkerArgs> args = ParseWorkerArgs(argc, argv);
  if (!args.has_value()) return 2;
  absl::StatusOr<CompileView> view = ToolkitView(args->cuda_root);
  if (!view.ok()) return SetupFailed(view.status());
  absl::StatusOr<PtxasBinaries> binaries = OpenPtxasBinaries(args->ptxas);
  if (!binaries.ok()) return SetupFailed(binaries.status());
  for (const std::string& why : binaries->unusable) {
    std::fprintf(stderr,
                 "jitcache-worker: a registered ptxas is unusable: %s\n",
                 why.c_str());
  }
  absl::StatusOr<std::unique_ptr<NvvmLibrary>> nvvm = LoadLibNvvm(*args);
  if (!nvvm.ok()) return SetupFailed(nvvm.status());
  if (absl::Status s =
          EnterWorkerSandbox(args->memory_limit, args->fd, kFirstPtxasFd,
                             static_cast<int>(binaries->paths.size()));
      !s.ok()) {
    return SetupFailed(s);
  }
  std::unique_ptr<CudaCompiler> compiler =
      CudaCompiler::ForWorker(std::move(args->include_dirs));
  const CompileView ptxas_view = PtxasView(*view, *binaries);
  const JobContext context{*view,     *binaries, ptxas_view,        nvvm->get(),
                           *compiler, hooks,     args->memory_limit};
  return ServeJobs(args->fd, context);
}

}  // namespace jitcache
