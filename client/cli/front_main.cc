// jitcache: the command-line front end. A `compile` that the daemon can
// answer from its store is served here over the daemon's hit socket
// (SOCKET.hit), in a process that loads nothing but libc and libstdc++;
// everything else (misses, errors, other commands, --help) is handed,
// with the same arguments, to jitcache-full, the gRPC client installed next
// to this binary. The output is the same either way.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/cli/hit_wire.h"
#include "common/fd_io.h"
#include "common/little_endian.h"
#include "common/paths.h"

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

// POSIX I/O rather than iostreams: constructing the first stream costs this
// short-lived process milliseconds.
std::optional<std::string> ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string data;
  char buffer[1 << 16];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, n);
  close(fd);
  if (n < 0) return std::nullopt;
  return data;
}

// Replaces the file by unlinking it rather than truncating it: ext4 flushes
// a file truncated and rewritten when it is closed (its replace-via-truncate
// heuristic), which cost a hit milliseconds.
bool WriteFile(const std::string& path, const std::string& data) {
  unlink(path.c_str());
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool written = jitcache::WriteFully(fd, data.data(), data.size());
  return close(fd) == 0 && written;
}

// The value of `flag` from "--flag=V" or "--flag V", as jitcache-full reads it.
bool TakeValue(const std::vector<std::string>& args, size_t& i,
               const std::string& flag, std::string* value) {
  if (args[i] == flag) {
    if (i + 1 >= args.size()) return false;
    *value = args[++i];
    return true;
  }
  if (args[i].rfind(flag + "=", 0) == 0) {
    *value = args[i].substr(flag.size() + 1);
    return true;
  }
  return false;
}

// The daemon's answer to `request`, if it had one in its store.
std::optional<std::string> AskHitSocket(const std::string& socket,
                                        const std::string& request) {
  const std::string path = socket + ".hit";
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return std::nullopt;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  // A daemon too busy to answer within this is asked over gRPC instead.
  const timeval timeout{0, 500 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::optional<std::string> answer;
  const uint32_t size = static_cast<uint32_t>(request.size());
  char frame[4];
  jitcache::le::Put<uint32_t>(frame, size);
  uint8_t status = 1, length[4];
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) ==
          0 &&
      jitcache::WriteFully(fd, frame, sizeof(frame)) &&
      jitcache::WriteFully(fd, request.data(), request.size()) &&
      jitcache::ReadFully(fd, reinterpret_cast<char*>(&status), 1) &&
      status == 0 &&
      jitcache::ReadFully(fd, reinterpret_cast<char*>(length),
                          sizeof(length))) {
    const uint32_t n = jitcache::le::Get<uint32_t>(length);
    std::string bytes(n, '\0');
    if (jitcache::ReadFully(fd, bytes.data(), n)) answer = std::move(bytes);
  }
  close(fd);
  return answer;
}

// Serves `jitcache compile ...` from a hit; returns the exit status, or
// nullopt for anything it does not handle (then jitcache-full does).
std::optional<int> CompileHit(const std::string& socket,
                              const std::vector<std::string>& args) {
  const auto start = std::chrono::steady_clock::now();
  jitcache::hit_wire::Request request;
  std::string file, output, arch, value, target_name = "ptx";
  std::vector<std::string> extra;
  for (size_t i = 0; i < args.size(); ++i) {
    if (TakeValue(args, i, "--arch", &value)) {
      if (!arch.empty() || value.find(',') != std::string::npos)
        return std::nullopt;
      arch = value;
    } else if (TakeValue(args, i, "--target", &value)) {
      target_name = value;
    } else if (TakeValue(args, i, "--name-expression", &value)) {
      request.name_expressions.push_back(value);
    } else if (TakeValue(args, i, "--header", &value)) {
      const size_t eq = value.find('=');
      if (eq == std::string::npos) return std::nullopt;
      std::optional<std::string> contents = ReadFile(value.substr(eq + 1));
      if (!contents) return std::nullopt;
      request.headers.emplace_back(value.substr(0, eq), *std::move(contents));
    } else if (TakeValue(args, i, "--program-name", &value)) {
      request.program_name = value;
    } else if (TakeValue(args, i, "-o", &value)) {
      output = value;
    } else if (file.empty() && args[i].rfind("-", 0) != 0) {
      file = args[i];
    } else if (args[i].rfind("--", 0) == 0 &&
               (args[i] == "--arch" || args[i] == "--target" ||
                args[i] == "--name-expression" || args[i] == "--header" ||
                args[i] == "--program-name")) {
      return std::nullopt;  // a flag without its value: let full say so
    } else {
      extra.push_back(args[i]);
    }
  }
  static const std::map<std::string, int> kTargets = {
      {"ptx", 1}, {"cubin", 2}, {"ltoir", 3}};
  auto target = kTargets.find(target_name);
  if (file.empty() || target == kTargets.end()) return std::nullopt;
  std::optional<std::string> source = ReadFile(file);
  if (!source) return std::nullopt;
  request.source = *std::move(source);
  if (request.program_name.empty()) {
    request.program_name = file.substr(file.find_last_of('/') + 1);
  }
  // The options exactly as jitcache-full sends them: -arch first.
  if (!arch.empty()) request.options.push_back("-arch=" + arch);
  request.options.insert(request.options.end(), extra.begin(), extra.end());
  request.target = target->second;

  std::optional<std::string> bytes = AskHitSocket(socket, Encode(request));
  if (!bytes) return std::nullopt;
  std::optional<jitcache::hit_wire::Response> response =
      jitcache::hit_wire::Decode(*bytes);
  if (!response || response->served != 1) return std::nullopt;
  const double total_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  const double compile_ms =
      static_cast<double>(response->compile_time_us) / 1000.0;
  if (response->outcome != 1) {
    std::printf("HIT COMPILE_ERROR key %s compile %.1f ms total %.1f ms\n",
                response->cache_key.c_str(), compile_ms, total_ms);
    std::fputs(response->log.c_str(), stderr);
    return 1;
  }
  if (output.empty()) {
    const size_t dot = file.find_last_of('.');
    output = (dot == std::string::npos ? file : file.substr(0, dot)) + "." +
             target_name;
  }
  if (!WriteFile(output, response->object)) return std::nullopt;
  std::printf("HIT key %s compile %.1f ms total %.1f ms -> %s (%zu bytes)\n",
              response->cache_key.c_str(), compile_ms, total_ms, output.c_str(),
              response->object.size());
  std::map<std::string, std::string> lowered(response->lowered_names.begin(),
                                             response->lowered_names.end());
  for (const auto& [expr, name] : lowered) {
    std::printf("  %s -> %s\n", expr.c_str(), name.c_str());
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
    if (TakeValue(args, i, "--socket", &value)) {
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
