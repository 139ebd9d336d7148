// jitcache: the command-line front end. A `compile` that the daemon can
// answer from its store is served here over the daemon's framed socket
// (SOCKET.hit), in a process that loads nothing but libc and libstdc++,
// when jitcache-full left a direct-mode memo for it that still holds
// (client/cli/direct_memo.h);
// everything else (misses, errors, other commands, --help) is handed,
// with the same arguments, to jitcache-full, the gRPC client installed next
// to this binary. The output is the same either way.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/cli/compile_flags.h"
#include "client/cli/direct_memo.h"
#include "client/wire/compile_wire.h"
#include "client/wire/framed_channel.h"
#include "common/fd_io.h"
#include "common/framed_protocol.h"
#include "common/paths.h"
#include "common/private_file.h"

namespace {

[[noreturn]] void RunFull(char** argv) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string path = "jitcache-full";
  if (n > 0) {
    std::string exe(self, static_cast<size_t>(n));
    path = exe.substr(0, exe.find_last_of('/') + 1) + "jitcache-full";
  }
  execv(path.c_str(), argv);
  std::fprintf(stderr, "jitcache: cannot run %s: %s\n", path.c_str(),
               std::strerror(errno));
  std::_Exit(3);
}

std::optional<std::string> ReadFile(const std::string& path) {
  return jitcache::ReadWholeFile(path.c_str());
}

bool WriteFile(const std::string& path, const std::string& data) {
  return jitcache::WriteOutputFile(path.c_str(), data.data(), data.size());
}

// The daemon's toolkit fingerprint, asked on the framed socket.
std::optional<std::string> DaemonToolkit(jitcache::FramedChannel& channel) {
  std::string answer;
  std::optional<std::string_view> toolkit = channel.Ask(
      std::string_view(&jitcache::framed_protocol::kToolkit, 1), answer);
  if (!toolkit) return std::nullopt;
  std::optional<jitcache::compile_wire::Toolkit> decoded =
      jitcache::compile_wire::DecodeToolkit(*toolkit);
  if (!decoded) return std::nullopt;
  return std::move(decoded->fingerprint);
}

// The memo of `asked` taken here from `moved`, kept without its place, when
// every file and absence it holds is the same here; kept as this place's
// own memo for the next command.
std::optional<jitcache::cli::DirectMemo> MovedHere(
    const jitcache::cli::MovableDirectMemo& moved, const std::string& dir,
    const std::string& socket, const std::string& cwd,
    const std::string& asked) {
  bool settled = false;
  std::optional<jitcache::cli::DirectMemo> here =
      jitcache::cli::MoveHere(moved, cwd, &settled);
  if (here && settled) {
    jitcache::KeepPrivateFile(dir,
                              jitcache::cli::DirectMemoName(socket, cwd, asked),
                              jitcache::cli::EncodeDirectMemo(*here));
  }
  return here;
}

// The direct-mode memo jitcache-full kept for this request here, or the
// one it kept without its place when this place has the same files, when
// its toolkit is the daemon's and nothing its include scan depended on has
// changed since (client/cli/direct_memo.h). The daemon is asked for its
// toolkit only when there is a memo to check.
std::optional<jitcache::cli::DirectMemo> MemoThatHolds(
    jitcache::FramedChannel& channel, const std::string& socket,
    const std::string& asked) {
  const std::string dir =
      jitcache::cli::DirectMemoDir(jitcache::DefaultScanCachePath());
  char cwd_buffer[4096];
  if (dir.empty() || getcwd(cwd_buffer, sizeof(cwd_buffer)) == nullptr) {
    return std::nullopt;
  }
  const std::string cwd(cwd_buffer);
  std::optional<jitcache::cli::DirectMemo> memo;
  if (std::optional<std::string> bytes = ReadFile(
          dir + "/" + jitcache::cli::DirectMemoName(socket, cwd, asked))) {
    memo = jitcache::cli::DecodeDirectMemo(*bytes);
    if (memo && (memo->asked != asked || memo->cwd != cwd)) memo.reset();
  }
  std::optional<jitcache::cli::MovableDirectMemo> moved;
  if (!memo) {
    if (std::optional<std::string> bytes = ReadFile(
            dir + "/" + jitcache::cli::MovableDirectMemoName(socket, asked))) {
      moved = jitcache::cli::DecodeMovableDirectMemo(*bytes);
      if (moved && moved->asked != asked) moved.reset();
    }
  }
  if (!memo && !moved) return std::nullopt;
  const std::optional<std::string> toolkit = DaemonToolkit(channel);
  if (!toolkit) return std::nullopt;
  if (memo) {
    if (memo->toolkit_fingerprint == *toolkit &&
        jitcache::cli::StampsHold(*memo)) {
      return memo;
    }
    // This place's memo no longer holds: the one without its place may
    // (after a change here that the other place has too).
    if (std::optional<std::string> bytes = ReadFile(
            dir + "/" + jitcache::cli::MovableDirectMemoName(socket, asked))) {
      moved = jitcache::cli::DecodeMovableDirectMemo(*bytes);
      if (moved && moved->asked != asked) moved.reset();
    }
  }
  if (!moved || moved->toolkit_fingerprint != *toolkit) return std::nullopt;
  return MovedHere(*moved, dir, socket, cwd, asked);
}

// Serves `jitcache compile ...` from a hit; returns the exit status, or
// nullopt for anything it does not handle (then jitcache-full does).
std::optional<int> CompileHit(const std::string& socket,
                              const std::vector<std::string>& args) {
  const auto start = std::chrono::steady_clock::now();
  jitcache::cli::CompileFlags flags;
  std::string error;
  // Anything but one plain compile is jitcache-full's to answer (or to
  // say what is wrong with).
  if (!jitcache::cli::ParseCompileFlags(args, &flags, &error) ||
      flags.archs.size() > 1 || flags.wait_for_proof) {
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [name, file] : flags.headers) {
    std::optional<std::string> contents = ReadFile(file);
    if (!contents) return std::nullopt;
    headers.emplace_back(name, *std::move(contents));
  }
  std::optional<std::string> source = ReadFile(flags.file);
  if (!source) return std::nullopt;
  const std::string asked =
      jitcache::compile_wire::Encode(jitcache::cli::FrontRequest(
          flags, *std::move(source), std::move(headers)));

  jitcache::FramedChannel channel(socket);
  std::optional<jitcache::cli::DirectMemo> memo =
      MemoThatHolds(channel, socket, asked);
  if (!memo) return std::nullopt;
  std::string answer;
  std::optional<std::string_view> bytes = channel.Ask(memo->request, answer);
  if (!bytes) return std::nullopt;
  std::optional<jitcache::compile_wire::Response> response =
      jitcache::compile_wire::Decode(*bytes);
  if (!response || response->served != 1) return std::nullopt;
  const double total_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  const double compile_ms =
      static_cast<double>(response->compile_time_us) / 1000.0;
  const std::map<std::string, std::string> lowered(
      response->lowered_names.begin(), response->lowered_names.end());
  const bool compiled = response->outcome == 1;
  const std::string output =
      flags.output.empty()
          ? jitcache::cli::DefaultOutput(flags.file, flags.target)
          : flags.output;
  if (compiled && !WriteFile(output, response->object)) return std::nullopt;
  std::fputs(jitcache::cli::ResultLines(
                 "HIT", compiled, "COMPILE_ERROR", response->cache_key,
                 compile_ms, total_ms, output, response->object.size(), lowered)
                 .c_str(),
             stdout);
  if (!compiled) {
    std::fputs(response->log.c_str(), stderr);
    return 1;
  }
  if (!response->log.empty()) std::fputs(response->log.c_str(), stderr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string socket, value;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    if (jitcache::cli::TakeValue(args, i, "--socket", &value)) {
      socket = value;
      continue;
    }
    break;
  }
  if (i < args.size() && args[i] == "compile") {
    if (socket.empty()) socket = jitcache::DefaultClientSocketPath();
    const std::vector<std::string> rest(args.begin() + static_cast<long>(i) + 1,
                                        args.end());
    if (std::optional<int> code = CompileHit(socket, rest)) {
      std::fflush(stdout);
      return *code;
    }
  }
  RunFull(argv);
}
