#include "client/nvrtc/nvrtc_daemon.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

#include "client/wire/link_wire.h"
#include "client/wire/real_library.h"
#include "client/wire/wire_values.h"
#include "common/framed_protocol.h"
#include "common/paths.h"

namespace jitcache::nvrtc {
namespace {

// As long as libjitcache's compile deadline: a miss waits for its compile.
constexpr std::chrono::minutes kCompileTimeout(15);
// As long as libjitcache's ping deadline: a daemon that is busy (starting,
// or under a herd of new processes) is waited for before the process
// decides, once, to do without it. No daemon listening is known at once.
constexpr std::chrono::seconds kToolkitTimeout(5);

// The request for `call`, its included files by their set's digest.
compile_wire::Request RequestFor(const CompileCall& call) {
  compile_wire::Request r;
  r.source = call.source;
  r.program_name = call.name;
  for (const auto& [name, contents] : call.headers) {
    r.headers.emplace_back(name, contents);
  }
  r.options.assign(call.options.begin(), call.options.end());
  r.name_expressions.assign(call.name_expressions.begin(),
                            call.name_expressions.end());
  r.target = call.target;
  r.exact_include_path = true;  // NVRTC searches what it is told
  return r;
}

// The buffers TakeBuffer hands out again.
struct BufferPool {
  static constexpr size_t kKept = 8;
  static constexpr size_t kLargest = size_t{16} << 20;
  static constexpr size_t kMostBytes = size_t{32} << 20;
  std::mutex mu;
  std::vector<std::string> idle;  // guarded by mu
  size_t bytes = 0;               // guarded by mu: their capacities
};

BufferPool& Pool() {
  static BufferPool* const pool = new BufferPool();
  return *pool;
}

}  // namespace

std::string TakeBuffer() {
  BufferPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.idle.empty()) return std::string();
  std::string buffer = std::move(pool.idle.back());
  pool.idle.pop_back();
  pool.bytes -= buffer.capacity();
  return buffer;
}

void GiveBuffer(std::string buffer) {
  if (buffer.capacity() > BufferPool::kLargest) return;
  BufferPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.idle.size() < BufferPool::kKept &&
      pool.bytes + buffer.capacity() <= BufferPool::kMostBytes) {
    pool.bytes += buffer.capacity();
    pool.idle.push_back(std::move(buffer));
  }
}

Answer::~Answer() {
  if (buffer.capacity() > std::string().capacity()) {
    GiveBuffer(std::move(buffer));
  }
}

bool Verbose() { return EnvFlag("JITCACHE_NVRTC_VERBOSE"); }

Daemon* Daemon::ForProcess() {
  static Daemon* const daemon = []() -> Daemon* {
    if (EnvFlag("JITCACHE_NVRTC_DISABLE")) return nullptr;
    std::string why;
    Daemon* connected = Connect(&why);
    if (connected == nullptr && Verbose()) {
      std::fprintf(stderr,
                   "jitcache libnvrtc.so.13: not using the daemon: %s\n",
                   why.c_str());
    }
    return connected;
  }();
  return daemon;
}

Daemon* Daemon::Connect(std::string* why) {
  const std::string socket = DefaultClientSocketPath();
  std::unique_ptr<Daemon> daemon(new Daemon(socket));
  std::string buffer;
  const std::optional<std::string_view> ping = daemon->channel_.Ask(
      std::string_view(&framed_protocol::kToolkit, 1), buffer, kToolkitTimeout);
  if (!ping.has_value()) {
    *why = "no daemon answers on the framed socket beside " + socket;
    return nullptr;
  }
  const std::optional<std::vector<link_wire::Library>> libraries =
      link_wire::DecodeLibraries(*ping);
  const std::optional<compile_wire::Toolkit> toolkit =
      compile_wire::DecodeToolkit(*ping);
  if (!libraries.has_value() || !toolkit.has_value()) {
    *why = "the daemon's toolkit answer does not parse";
    return nullptr;
  }
  if (!SameRealLibrary(link_wire::Identities(*libraries), "JITCACHE_REAL_NVRTC",
                       "libnvrtc.so.13", "lib64", why)
           .has_value()) {
    return nullptr;
  }
  daemon->toolkit_ = {toolkit->include_dirs, toolkit->fingerprint};
  return daemon.release();
}

bool Daemon::Ask(const compile_wire::Request& request, Answer& answer) {
  // The thread's: a warm one costs no allocation.
  thread_local std::string payload;
  payload.assign(1, framed_protocol::kCompileShared);
  compile_wire::EncodeTo(request, payload);
  answer.refusal = {};
  const std::optional<std::string_view> bytes = channel_.Ask(
      payload, answer.buffer, kCompileTimeout, &answer.refusal, &answer.mapped);
  // A request that carried included files is not kept a thread's lifetime.
  if (payload.capacity() > (size_t{1} << 20)) std::string().swap(payload);
  if (!bytes.has_value()) {
    answer.why = answer.refusal.code != 0
                     ? "the daemon refused it: " + answer.refusal.message
                     : "the daemon did not answer";
    return false;
  }
  std::optional<compile_wire::ResponseView> response =
      compile_wire::DecodeView(*bytes);
  if (!response.has_value()) {
    answer.why = "the daemon's answer does not parse";
    return false;
  }
  answer.response = *std::move(response);
  answer.answered = true;
  return true;
}

Answer Daemon::Compile(const CompileCall& call) {
  Answer answer;
  answer.buffer = TakeBuffer();
  compile_wire::Request request = RequestFor(call);
  internal::IncludeRequest scan;
  scan.options = request.options;
  scan.program_name = call.name;
  scan.source = call.source;
  scan.headers = call.headers;
  scan.exact_include_path = request.exact_include_path;
  PlainStatusOr<internal::ResolvedIncludes> resolved =
      internal::ResolveIncludes(toolkit_, scan);
  if (!resolved.ok()) {
    answer.why = resolved.status().message();
    return answer;
  }
  if (resolved->included != nullptr) {
    request.includes_resolved = true;
    request.working_directory = resolved->working_directory;
    request.included_set_sha256 = std::string(resolved->included_set.AsBytes());
    request.included_mtimes_ns = resolved->mtimes_ns;
  }
  if (Ask(request, answer) || answer.refusal.code != wire::Code::kNotFound ||
      resolved->included == nullptr || resolved->included->files.empty()) {
    return answer;
  }
  // The daemon lacks the files' bytes: they go with the request, in place
  // of their set's digest.
  PlainStatusOr<std::vector<internal::IncludedFileBytes>> files =
      internal::ReadIncludedFiles(*resolved->included);
  if (!files.ok()) {
    answer.why = files.status().message();
    return answer;
  }
  request.included_set_sha256.clear();
  request.included_mtimes_ns.clear();
  for (internal::IncludedFileBytes& f : *files) {
    request.included_files.push_back(
        {std::move(f.path), std::move(f.contents), f.mtime_ns});
  }
  Ask(request, answer);
  return answer;
}

}  // namespace jitcache::nvrtc
