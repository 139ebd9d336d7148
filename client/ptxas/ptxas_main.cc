// jitcache-ptxas: ptxas for unmodified programs. Installed as
// .../jitcache/ptxas, so that Triton (TRITON_PTXAS_PATH) and anything else
// that runs "ptxas" by path can name it. It stands for one real ptxas:
// $JITCACHE_REAL_PTXAS, else $CUDA_HOME/bin/ptxas, else
// /usr/local/cuda/bin/ptxas. When the node's jitcached runs that very
// binary (the toolkit's, or one registered with --ptxas) and the command
// line is one it can key, the daemon answers: once per distinct PTX and
// command line on the node (and the cluster, with --remote), with the
// output file, stdout, stderr and exit status the real ptxas gives here.
// Everything else (--version, --options-file, a daemon that is down, an
// output this process cannot write) runs the real ptxas, exec'd in this
// process's place with the same arguments.
//
// JITCACHE_PTXAS_DISABLE=1 always runs the real one. JITCACHE_PTXAS_LOG=FILE
// appends a line per run: how it was answered, and why not by the daemon.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "client/rpc/stand_in_client.h"
#include "common/fd_io.h"
#include "common/file_stamp.h"
#include "common/ptx_sources.h"
#include "common/ptxas_command.h"
#include "jitcache/client.h"

namespace jitcache {
namespace {

// The PTX files Triton writes are hundreds of KiB; the daemon takes up to
// its --max_source_bytes.
constexpr off_t kMaxPtxBytes = off_t{256} << 20;

std::string RealPtxasPath() {
  if (const char* path = std::getenv("JITCACHE_REAL_PTXAS"); path && *path) {
    return path;
  }
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) {
    return std::string(home) + "/bin/ptxas";
  }
  return "/usr/local/cuda/bin/ptxas";
}

class Run {
 public:
  Run(int argc, char** argv)
      : argv_(argv),
        start_(std::chrono::steady_clock::now()),
        real_(RealPtxasPath()) {
    for (int i = 1; i < argc; ++i) arguments_.emplace_back(argv[i]);
  }

  int Main() {
    if (EnvFlag("JITCACHE_PTXAS_DISABLE")) return Real("disabled");
    std::error_code ec;
    const std::string resolved = std::filesystem::canonical(real_, ec);
    const std::string self = std::filesystem::canonical("/proc/self/exe", ec);
    if (resolved.empty() || resolved == self) {
      std::fprintf(stderr,
                   "jitcache-ptxas: no real ptxas at %s (set "
                   "JITCACHE_REAL_PTXAS to the ptxas to stand for)\n",
                   real_.c_str());
      return 255;
    }
    absl::StatusOr<PtxasCommand> command = ParsePtxasCommand(arguments_);
    if (!command.ok()) return Real(command.status().message());
    struct stat binary;
    if (stat(resolved.c_str(), &binary) != 0) return Real("no real ptxas");

    Client::PtxasCall call;
    call.ptxas.name = "ptxas";
    call.ptxas.path = resolved;
    const FileStamp stamp = StampOf(binary);
    call.ptxas.device = stamp.dev;
    call.ptxas.inode = stamp.ino;
    call.ptxas.size = stamp.size;
    call.ptxas.mtime_ns = stamp.mtime_ns;
    call.ptxas.ctime_ns = stamp.ctime_ns;
    call.program = argv_[0];
    call.arguments = arguments_;
    call.working_directory = std::filesystem::current_path(ec).string();
    if (ec) return Real("no working directory");
    if (!ReadInput(command->input_path(), &call.ptx)) {
      return Real("the PTX file cannot be read here");
    }
    // ptxas stats the sources the PTX names and writes what it finds into
    // the cubin: what it would find here goes with the request.
    absl::StatusOr<std::vector<std::string>> sources = PtxSourceFiles(call.ptx);
    if (!sources.ok()) return Real(sources.status().message());
    for (const std::string& path : *sources) {
      struct stat st;
      Client::PtxasCall::Source source{path};
      if (stat(path.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode)) return Real("a source is no regular file");
        source.exists = true;
        source.size = static_cast<uint64_t>(st.st_size);
        source.mtime_ns = StampNs(st.st_mtim);
      } else if (errno != ENOENT && errno != ENOTDIR) {
        return Real("a source cannot be looked at here");
      }
      call.sources.push_back(std::move(source));
    }

    ClientOptions options;
    options.local_fallback = false;
    absl::StatusOr<Client> client = Client::Connect(options);
    if (!client.ok()) return Real(client.status().message());
    absl::StatusOr<Client::PtxasAnswer> answer = client->RunPtxas(call);
    // Whether ptxas ran for this call (the nameless ask may have been the
    // miss that found out the names matter).
    bool compiled = answer.ok() && !answer->hit;
    if (answer.ok() && answer->names_matter) {
      call.with_names = true;
      answer = client->RunPtxas(call);
      compiled = compiled || (answer.ok() && !answer->hit);
    }
    if (!answer.ok()) return Real(answer.status().message());
    if (answer->names_matter) return Real("the daemon keeps asking for names");
    if (answer->output_written &&
        !WriteOutput(command->output_path(), answer->output)) {
      return Real("the output file cannot be written here");
    }
    WriteFully(STDOUT_FILENO, answer->stdout_bytes.data(),
               answer->stdout_bytes.size());
    WriteFully(STDERR_FILENO, answer->stderr_bytes.data(),
               answer->stderr_bytes.size());
    Log(compiled ? "compiled" : "hit", call.with_names ? "named" : "");
    return answer->exit_status;
  }

 private:
  // Only a regular file, read whole: a FIFO or a device read here would
  // be gone for the real ptxas.
  static bool ReadInput(const std::string& path, std::string* bytes) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
              st.st_size <= kMaxPtxBytes;
    if (ok) {
      bytes->resize(static_cast<size_t>(st.st_size));
      ok = ReadFully(fd, bytes->data(), bytes->size());
    }
    close(fd);
    return ok;
  }

  // As ptxas writes it: O_TRUNC in place, mode 0666 less the umask.
  static bool WriteOutput(const std::string& path, const std::string& bytes) {
    const int fd =
        open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return false;
    const bool ok = WriteFully(fd, bytes.data(), bytes.size());
    return close(fd) == 0 && ok;
  }

  void Log(absl::string_view how, absl::string_view why) const {
    const char* path = std::getenv("JITCACHE_PTXAS_LOG");
    if (path == nullptr || *path == '\0') return;
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start_)
                          .count();
    const std::string line = absl::StrCat(how, " ", ms, " ms ", why, "\n");
    const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    WriteFully(fd, line.data(), line.size());
    close(fd);
  }

  // The real ptxas in this process's place: its arguments, output and
  // exit status are the caller's own.
  int Real(absl::string_view why) {
    Log("real", why);
    std::vector<char*> argv(argv_, argv_ + arguments_.size() + 1);
    argv.push_back(nullptr);
    execv(real_.c_str(), argv.data());
    std::fprintf(stderr, "jitcache-ptxas: cannot run %s: %s\n", real_.c_str(),
                 std::strerror(errno));
    return 255;
  }

  char** argv_;
  const std::chrono::steady_clock::time_point start_;
  const std::string real_;
  std::vector<std::string> arguments_;
};

}  // namespace
}  // namespace jitcache

int main(int argc, char** argv) { return jitcache::Run(argc, argv).Main(); }
