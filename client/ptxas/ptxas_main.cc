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
// It asks over the daemon's framed socket (SOCKET.hit) and loads nothing but
// libc and libstdc++: it is started once per kernel, and loading gRPC and
// protobuf cost each run about 10 ms. Without that socket (a daemon run
// with it off), the real ptxas runs.
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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/wire/framed_channel.h"
#include "client/wire/ptxas_wire.h"
#include "client/wire/wire_values.h"
#include "common/fd_io.h"
#include "common/file_stamp.h"
#include "common/framed_protocol.h"
#include "common/paths.h"
#include "common/ptx_sources.h"
#include "common/ptxas_command.h"

namespace jitcache {
namespace {

// The PTX files Triton writes are hundreds of KiB; the daemon takes up to
// its --max_source_bytes.
constexpr off_t kMaxPtxBytes = off_t{256} << 20;
// Covers queueing and the run itself (the daemon's own limit is 10 min).
constexpr std::chrono::minutes kRunTimeout(15);

std::string RealPtxasPath() {
  if (const char* path = std::getenv("JITCACHE_REAL_PTXAS"); path && *path) {
    return path;
  }
  return jitcache::CudaHome() + "/bin/ptxas";
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
    std::string why;
    std::optional<PtxasCommand> command = ParsePtxasCommand(arguments_, &why);
    if (!command.has_value()) return Real("for the real ptxas: " + why);
    struct stat binary;
    if (stat(resolved.c_str(), &binary) != 0) return Real("no real ptxas");

    ptxas_wire::Request request;
    request.ptxas_path = resolved;
    request.ptxas_stamp = StampOf(binary);
    request.program = argv_[0];
    request.arguments = arguments_;
    request.working_directory = std::filesystem::current_path(ec).string();
    if (ec) return Real("no working directory");
    if (!ReadInput(command->input_path(), &request.ptx)) {
      return Real("the PTX file cannot be read here");
    }
    // ptxas stats the sources the PTX names and writes what it finds into
    // the cubin: what it would find here goes with the request.
    std::optional<std::vector<std::string>> sources =
        PtxSourceFiles(request.ptx, &why);
    if (!sources.has_value()) return Real("for the real ptxas: " + why);
    std::optional<std::vector<ptxas_wire::Source>> stats =
        ptxas_wire::StatSources(*sources, &why);
    if (!stats.has_value()) return Real(why);
    request.sources = *std::move(stats);

    FramedChannel channel(DefaultClientSocketPath());
    std::string buffer;
    FramedChannel::Refusal refused;
    std::optional<ptxas_wire::Answer> answer =
        Ask(channel, request, buffer, &refused);
    // Whether ptxas ran for this call (the nameless ask may have been the
    // miss that found out the names matter).
    bool compiled = answer.has_value() && answer->served != wire::Served::kHit;
    if (answer.has_value() && answer->names_matter) {
      request.with_names = true;
      answer = Ask(channel, request, buffer, &refused);
      compiled = compiled ||
                 (answer.has_value() && answer->served != wire::Served::kHit);
    }
    if (refused.code != 0) {
      return Real("the daemon refused it (code " +
                  std::to_string(refused.code) + "): " + refused.message);
    }
    if (!answer.has_value()) return Real("the daemon did not answer");
    if (answer->names_matter) return Real("the daemon keeps asking for names");
    if (answer->output_written &&
        !WriteOutput(command->output_path(), answer->output)) {
      return Real("the output file cannot be written here");
    }
    WriteFully(STDOUT_FILENO, answer->stdout_bytes.data(),
               answer->stdout_bytes.size());
    WriteFully(STDERR_FILENO, answer->stderr_bytes.data(),
               answer->stderr_bytes.size());
    Log(compiled ? "compiled" : "hit", request.with_names ? "named" : "");
    return answer->exit_status;
  }

 private:
  static std::optional<ptxas_wire::Answer> Ask(
      FramedChannel& channel, const ptxas_wire::Request& request,
      std::string& buffer, FramedChannel::Refusal* refused) {
    const std::string payload =
        std::string(1, framed_protocol::kPtxas) + ptxas_wire::Encode(request);
    std::optional<std::string_view> bytes =
        channel.Ask(payload, buffer, kRunTimeout, refused);
    if (!bytes.has_value()) return std::nullopt;
    return ptxas_wire::Decode(*bytes);
  }

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

  void Log(std::string_view how, std::string_view why) const {
    const char* path = std::getenv("JITCACHE_PTXAS_LOG");
    if (path == nullptr || *path == '\0') return;
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start_)
                          .count();
    char took[32];
    std::snprintf(took, sizeof(took), " %.3f ms ", ms);
    const std::string line = std::string(how) + took + std::string(why) + "\n";
    const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    WriteFully(fd, line.data(), line.size());
    close(fd);
  }

  // The real ptxas in this process's place: its arguments, output and
  // exit status are the caller's own.
  int Real(std::string_view why) {
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
