// libnvJitLink.so.13 from jitcache: nvJitLink's C API, answered by the
// node's jitcached when it can, and by the real nvJitLink otherwise, with
// identical results. A program picks it up, unmodified, through LD_PRELOAD
// (or this library's directory first on LD_LIBRARY_PATH); see README:
// "Links through nvJitLink".
//
// nvJitLink answers every call at once (an input is checked, PTX assembled,
// when it is added), so a link cannot wait for its last call to go to the
// daemon. The daemon keeps, for each link it ran as a caller drove it,
// what the real nvJitLink answered to each call, under keys of the link's
// first steps (the options; the options and the first input; ...). Each
// call here asks for the record of the steps so far and answers from it.
// When the daemon has none, the link goes on in the real nvJitLink, in
// this process; at nvJitLinkComplete the daemon is asked for the whole
// link, and its answer is used only if every call the real nvJitLink
// answered here was answered the same there (otherwise the real one
// completes it). Whatever the daemon cannot answer exactly (an option
// that prints timings, a file nvJitLinkAddFile cannot read here, a call out
// of the usual order)
// goes to the real nvJitLink, opened by path from $JITCACHE_REAL_NVJITLINK,
// else $CUDA_HOME/lib64, else /usr/local/cuda/lib64; the calls made so
// far are replayed there first.
//
// It asks over the daemon's framed socket (SOCKET.hit; a link the daemon runs
// is the one answer there that waits) and loads nothing but libc and
// libstdc++: it is preloaded into every process of a job, and loading gRPC
// and protobuf cost each about 16 ms. Without that socket (a daemon run
// with --hit_socket=false) every link is the real nvJitLink's.
//
// JITCACHE_NVJITLINK_VERBOSE=1 says on stderr why a link went to the real
// nvJitLink; JITCACHE_NVJITLINK_DISABLE=1 sends every link there.
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/nvjitlink/input_extent.h"
#include "client/wire/framed_channel.h"
#include "client/wire/link_wire.h"
#include "client/wire/real_library.h"
#include "client/wire/wire_values.h"
#include "common/digest.h"
#include "common/fd_io.h"
#include "common/file_stamp.h"
#include "common/framed_protocol.h"
#include "common/paths.h"
#include "common/ptx_sources.h"
#include "common/sized_read.h"

// nvJitLink.h defines its API as inline wrappers of versioned symbols; this
// library defines both, so it spells the ABI itself.
extern "C" {
typedef struct nvJitLink* nvJitLinkHandle;
typedef int nvJitLinkResult;
typedef int nvJitLinkInputType;
}

namespace {

constexpr nvJitLinkResult kSuccess = 0;
constexpr nvJitLinkResult kInternal = 6;
constexpr nvJitLinkInputType kInputAny = 10;  // NVJITLINK_INPUT_ANY

using jitcache::link_wire::Step;
using jitcache::link_wire::Trace;

// The input types nvJitLink numbers (nvJitLink.h) the daemon takes, as the
// wire's ObjectKind numbers them (1 CUBIN is OBJECT_KIND_CUBIN 2, 2 PTX is
// OBJECT_KIND_PTX 1, the rest alike), and back (TypeOf); others go to the
// real nvJitLink as they are.
std::optional<int> KindOf(nvJitLinkInputType type) {
  if (type == 1) return 2;
  if (type == 2) return 1;
  if (type >= 3 && type <= 6) return type;
  return std::nullopt;
}

nvJitLinkInputType TypeOf(int kind) {
  for (nvJitLinkInputType type = 1; type <= 6; ++type) {
    if (KindOf(type) == kind) return type;
  }
  return 0;
}

// How long a link the daemon runs may take before this process links
// itself (the daemon's own limit ends it sooner).
constexpr std::chrono::minutes kLinkTimeout(15);
// A first steps' ask is a lookup: the channel's own limit for one.
constexpr std::chrono::milliseconds kStepsTimeout(500);

#define JITCACHE_NVJITLINK_FUNCTIONS(X)                                     \
  X(nvJitLinkCreate, nvJitLinkResult, nvJitLinkHandle*, uint32_t,           \
    const char**)                                                           \
  X(nvJitLinkDestroy, nvJitLinkResult, nvJitLinkHandle*)                    \
  X(nvJitLinkAddData, nvJitLinkResult, nvJitLinkHandle, nvJitLinkInputType, \
    const void*, size_t, const char*)                                       \
  X(nvJitLinkAddFile, nvJitLinkResult, nvJitLinkHandle, nvJitLinkInputType, \
    const char*)                                                            \
  X(nvJitLinkComplete, nvJitLinkResult, nvJitLinkHandle)                    \
  X(nvJitLinkGetLinkedCubinSize, nvJitLinkResult, nvJitLinkHandle, size_t*) \
  X(nvJitLinkGetLinkedCubin, nvJitLinkResult, nvJitLinkHandle, void*)       \
  X(nvJitLinkGetLinkedPtxSize, nvJitLinkResult, nvJitLinkHandle, size_t*)   \
  X(nvJitLinkGetLinkedPtx, nvJitLinkResult, nvJitLinkHandle, char*)         \
  X(nvJitLinkGetErrorLogSize, nvJitLinkResult, nvJitLinkHandle, size_t*)    \
  X(nvJitLinkGetErrorLog, nvJitLinkResult, nvJitLinkHandle, char*)          \
  X(nvJitLinkGetInfoLogSize, nvJitLinkResult, nvJitLinkHandle, size_t*)     \
  X(nvJitLinkGetInfoLog, nvJitLinkResult, nvJitLinkHandle, char*)           \
  X(nvJitLinkVersion, nvJitLinkResult, unsigned int*, unsigned int*)

// The real nvJitLink, loaded on first need.
struct Real {
  void* lib = nullptr;
#define JITCACHE_NVJITLINK_MEMBER(name, ret, ...) \
  ret (*name)(__VA_ARGS__) = nullptr;
  JITCACHE_NVJITLINK_FUNCTIONS(JITCACHE_NVJITLINK_MEMBER)
#undef JITCACHE_NVJITLINK_MEMBER
};

const Real& RealNvJitLink() {
  static const Real* real = [] {
    auto* r = new Real();
    r->lib = jitcache::OpenRealLibrary("JITCACHE_REAL_NVJITLINK",
                                       "libnvJitLink.so.13");
    if (r->lib == nullptr) return r;
#define JITCACHE_NVJITLINK_RESOLVE(name, ...) \
  r->name = reinterpret_cast<decltype(r->name)>(dlsym(r->lib, #name));
    JITCACHE_NVJITLINK_FUNCTIONS(JITCACHE_NVJITLINK_RESOLVE)
#undef JITCACHE_NVJITLINK_RESOLVE
    return r;
  }();
  return *real;
}

bool Verbose() {
  static const bool verbose = jitcache::EnvFlag("JITCACHE_NVJITLINK_VERBOSE");
  return verbose;
}

// The node's daemon, over its framed socket, when it links with the very
// file this process would open as the real nvJitLink (otherwise its
// answers would be another library's).
struct Daemon {
  explicit Daemon(std::string socket) : channel(std::move(socket)) {}
  jitcache::FramedChannel channel;
  jitcache::link_wire::Library nvjitlink;  // the daemon's account of it
};

// What the real nvJitLink 13.0 reads from the environment: the trace
// messages its strings name, and what its getenv calls during a link ask
// (those of the libNVVM inside it: the producer LTO-IR names, a log file,
// its concurrency). The daemon's workers run without any of them.
constexpr const char* kEnvironmentThatChangesAnswers[] = {
    "NVJITLINK_TRACE_MESSAGES", "LLVM_OVERRIDE_PRODUCER", "AS_SECURE_LOG_FILE",
    "LIBNVVM_DISABLE_CONCURRENT_API"};

// One for the process; nullptr when there is none to use.
Daemon* TheDaemon() {
  static Daemon* daemon = []() -> Daemon* {
    if (jitcache::EnvFlag("JITCACHE_NVJITLINK_DISABLE")) return nullptr;
    // The caller's environment that changes what the real nvJitLink answers
    // (trace lines in its info logs): the daemon's records hold none of it.
    for (const char* variable : kEnvironmentThatChangesAnswers) {
      if (std::getenv(variable) != nullptr) {
        if (Verbose()) {
          std::fprintf(stderr,
                       "jitcache libnvJitLink.so.13: not using the daemon: "
                       "%s is set (the real nvJitLink answers otherwise)\n",
                       variable);
        }
        return nullptr;
      }
    }
    auto d = std::make_unique<Daemon>(jitcache::DefaultClientSocketPath());
    std::string buffer;
    const std::optional<std::string_view> ping = d->channel.Ask(
        std::string(1, jitcache::framed_protocol::kToolkit), buffer);
    std::optional<std::vector<jitcache::link_wire::Library>> libraries;
    if (ping.has_value())
      libraries = jitcache::link_wire::DecodeLibraries(*ping);
    std::string why = "no daemon answers on the framed socket beside " +
                      jitcache::DefaultClientSocketPath();
    if (libraries.has_value()) {
      const std::optional<size_t> same = jitcache::SameRealLibrary(
          jitcache::link_wire::Identities(*libraries),
          "JITCACHE_REAL_NVJITLINK", "libnvJitLink.so.13", "lib64", &why);
      if (same.has_value()) {
        d->nvjitlink = (*libraries)[*same];
        return d.release();
      }
    }
    if (Verbose()) {
      std::fprintf(stderr,
                   "jitcache libnvJitLink.so.13: not using the daemon: %s\n",
                   why.c_str());
    }
    return nullptr;
  }();
  return daemon;
}

// A link as the caller sees it: answered from the daemon's record while
// there is one, then by a real nvJitLink handle holding the same calls.
struct Link {
  std::mutex mu;
  std::vector<std::string> options;
  std::vector<jitcache::link_wire::Input> inputs;
  // What each call made so far answered (from the daemon or the real
  // nvJitLink): the last step's logs are the handle's logs now.
  Trace answered;
  bool eligible = true;  // the daemon may answer this link
  nvJitLinkHandle real = nullptr;
  // The names given to `real`: nvJitLink keeps the pointer it is handed and
  // names the input by it later (a link error at nvJitLinkComplete), so each
  // lives as long as the handle and never moves (`inputs` reallocates).
  std::deque<std::string> real_names;
  // What nvJitLinkAddFile read, for as long as the handle (never moves).
  std::deque<std::string> file_bytes;
  // nvJitLinkComplete was answered: by the record while `real` is null.
  bool completed = false;
};

Link* Of(nvJitLinkHandle h) { return reinterpret_cast<Link*>(h); }

void Why(const char* what) {
  if (Verbose()) {
    std::fprintf(stderr, "jitcache libnvJitLink: the real nvJitLink: %s\n",
                 what);
  }
}

// After a real call: what it answered and the logs it left.
void RecordRealStep(Link& link, nvJitLinkResult result) {
  const Real& r = RealNvJitLink();
  Step step;
  step.result = result;
  auto read = [&](nvJitLinkResult (*get_size)(nvJitLinkHandle, size_t*),
                  nvJitLinkResult (*get)(nvJitLinkHandle, char*),
                  std::string* text) {
    return jitcache::ReadSized(
        [&](size_t* size) { return get_size(link.real, size); },
        [&](char* into) { return get(link.real, into); }, kSuccess, text);
  };
  step.error_size_result =
      read(r.nvJitLinkGetErrorLogSize, r.nvJitLinkGetErrorLog, &step.error_log);
  step.info_size_result =
      read(r.nvJitLinkGetInfoLogSize, r.nvJitLinkGetInfoLog, &step.info_log);
  link.answered.steps.push_back(std::move(step));
}

// Moves the link to a real nvJitLink handle: the calls answered so far
// are made again there (nvJitLink is deterministic: they answer the same).
// False when the real nvJitLink cannot be had.
bool Materialize(Link& link) {
  if (link.real != nullptr) return true;
  const Real& r = RealNvJitLink();
  if (r.nvJitLinkCreate == nullptr) return false;
  std::vector<const char*> argv;
  for (const std::string& o : link.options) argv.push_back(o.c_str());
  r.nvJitLinkCreate(&link.real, static_cast<uint32_t>(argv.size()),
                    argv.data());
  if (link.real == nullptr) return false;
  for (const jitcache::link_wire::Input& in : link.inputs) {
    r.nvJitLinkAddData(link.real,
                       in.typed_by_content ? kInputAny : TypeOf(in.kind),
                       in.bytes.data(), in.bytes.size(),
                       link.real_names.emplace_back(in.name).c_str());
  }
  if (link.completed) r.nvJitLinkComplete(link.real);
  return true;
}

// The daemon's answer to the link so far: its first steps' record, or
// (not `steps_only`) the whole link, run on a miss.
std::optional<Trace> Ask(Daemon& daemon, const Link& link, bool steps_only,
                         bool send_bytes,
                         jitcache::FramedChannel::Refusal* refused) {
  const std::string payload =
      std::string(1, jitcache::framed_protocol::kLink) +
      jitcache::link_wire::Encode(link.options, link.inputs, steps_only,
                                  send_bytes);
  std::string buffer;
  const std::optional<std::string_view> bytes = daemon.channel.Ask(
      payload, buffer, steps_only ? kStepsTimeout : kLinkTimeout, refused);
  if (!bytes.has_value()) return std::nullopt;
  return jitcache::link_wire::Decode(*bytes);
}

// The daemon's record of the calls so far, when it has one that answers
// them all.
std::optional<Trace> Recorded(const Link& link, bool complete) {
  Daemon* daemon = TheDaemon();
  if (daemon == nullptr || !link.eligible) return std::nullopt;
  // A link answered here by the real nvJitLink so far is one the daemon
  // has no record of: its inputs go with the request. Otherwise they go
  // only if the daemon lacks them (it then does not answer).
  jitcache::FramedChannel::Refusal refused;
  std::optional<Trace> answer =
      Ask(*daemon, link, !complete,
          /*send_bytes=*/link.real != nullptr, &refused);
  // Sent again with the inputs' bytes only when the daemon lacks some of
  // them (NOT_FOUND); any other refusal would only be given again.
  if (!answer.has_value() && complete && link.real == nullptr &&
      (refused.code == 0 || refused.code == jitcache::wire::Code::kNotFound)) {
    answer = Ask(*daemon, link, false, /*send_bytes=*/true, &refused);
  }
  if (!answer.has_value()) {
    if (complete) {
      Why(refused.code != 0
              ? ("the daemon refused it: " + refused.message).c_str()
              : "the daemon did not answer");
    }
    return std::nullopt;
  }
  // A record answers only if it holds every call made so far: the daemon
  // stops after a refused nvJitLinkCreate, whose later calls the real
  // nvJitLink answers (or crashes on) in this process.
  const size_t steps = link.inputs.size() + (complete ? 2 : 1);
  if (!answer->handle_created || answer->steps.size() != steps ||
      answer->complete != complete) {
    return std::nullopt;
  }
  return answer;
}

// Tells the daemon that its record of this link answered a call otherwise
// than this process's own nvJitLink (with the inputs, so that it can link
// again and see). Answered at once; nothing waits for the daemon's link.
void Disprove(const Link& link) {
  Daemon* daemon = TheDaemon();
  if (daemon == nullptr) return;
  const std::string payload =
      std::string(1, jitcache::framed_protocol::kLink) +
      jitcache::link_wire::Encode(link.options, link.inputs,
                                  /*steps_only=*/false, /*send_bytes=*/true,
                                  /*disproves=*/true);
  std::string buffer;
  daemon->channel.Ask(payload, buffer);
}

// The step the daemon's record answers now (its last).
const Step& Last(const Link& link) { return link.answered.steps.back(); }

// The answer of the call the record answers now: what the real call wrote
// on standard error is written on the caller's, then its result.
nvJitLinkResult Answer(const Link& link) {
  const std::string& text = Last(link).stderr_text;
  if (!text.empty()) {
    std::fflush(stderr);
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n =
          write(STDERR_FILENO, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }
  return Last(link).result;
}

// Two answers to one call, as the caller saw them: result and logs (the
// real nvJitLink in this process wrote its standard error itself).
bool SameCall(const Step& a, const Step& b) {
  return a.result == b.result && a.error_size_result == b.error_size_result &&
         a.error_log == b.error_log &&
         a.info_size_result == b.info_size_result && a.info_log == b.info_log;
}

// nvJitLink's answer when a handle's state is beyond the real library (it
// could not be loaded): an internal error, as nvJitLink's own would be.
nvJitLinkResult Unavailable() {
  std::fprintf(stderr,
               "jitcache libnvJitLink: the real nvJitLink cannot be loaded\n");
  return kInternal;
}

// A call the real nvJitLink answers as it stands (a null handle is none of
// ours: the real one says what that is).
template <auto kFunction, typename... Args>
nvJitLinkResult Forward(Args... args) {
  const Real& r = RealNvJitLink();
  return r.*kFunction != nullptr ? (r.*kFunction)(args...) : Unavailable();
}

// The record answers a handle while the real nvJitLink has none of it.
bool FromRecord(const Link& link) {
  return link.real == nullptr && !link.answered.steps.empty();
}

// A size read, from the record when it holds the answer. A size the real
// call refused is answered with its result alone: the real nvJitLink
// leaves *size as it was (the differential test checks it with a value
// the caller set).
std::optional<nvJitLinkResult> RecordedSize(int size_result,
                                            const std::string& bytes,
                                            size_t* size) {
  if (size == nullptr) return std::nullopt;
  if (size_result == kSuccess) *size = bytes.size();
  return size_result;
}

// The bytes' read, from the record when the real read succeeded.
std::optional<nvJitLinkResult> RecordedBytes(int result,
                                             const std::string& bytes,
                                             void* out) {
  if (out == nullptr || result != kSuccess) return std::nullopt;
  std::memcpy(out, bytes.data(), bytes.size());
  return kSuccess;
}

// A log's read: as the bytes', but an empty log is read as one NUL, as the
// real nvJitLink writes it into the caller's buffer.
std::optional<nvJitLinkResult> RecordedLog(int result, const std::string& log,
                                           char* out) {
  if (out == nullptr || result != kSuccess) return std::nullopt;
  if (log.empty()) {
    *out = '\0';
    return kSuccess;
  }
  return RecordedBytes(result, log, out);
}

// The logs after the last call: error or info, by the step's fields.
template <int Step::*kResult, std::string Step::*kLog>
std::optional<nvJitLinkResult> LogSize(const Link& link, size_t* size) {
  if (!FromRecord(link)) return std::nullopt;
  const Step& last = Last(link);
  return RecordedSize(last.*kResult, last.*kLog, size);
}

template <int Step::*kResult, std::string Step::*kLog>
std::optional<nvJitLinkResult> Log(const Link& link, char* out) {
  if (!FromRecord(link)) return std::nullopt;
  const Step& last = Last(link);
  return RecordedLog(last.*kResult, last.*kLog, out);
}

// The outputs, once the record completed the link: cubin or PTX, by the
// trace's fields.
template <int Trace::*kSizeResult, std::string Trace::*kBytes>
std::optional<nvJitLinkResult> OutputSize(const Link& link, size_t* size) {
  if (!FromRecord(link) || !link.completed) return std::nullopt;
  return RecordedSize(link.answered.*kSizeResult, link.answered.*kBytes, size);
}

template <int Trace::*kResult, std::string Trace::*kBytes, typename Out>
std::optional<nvJitLinkResult> Output(const Link& link, Out out) {
  if (!FromRecord(link) || !link.completed) return std::nullopt;
  return RecordedBytes(link.answered.*kResult, link.answered.*kBytes, out);
}

// A call on a handle: from the record when `recorded` answers it, else by
// the real nvJitLink, the link moved there first.
template <auto kFunction, typename Out>
nvJitLinkResult OnLink(nvJitLinkHandle handle, Out out,
                       std::optional<nvJitLinkResult> (*recorded)(const Link&,
                                                                  Out)) {
  if (handle == nullptr) return Forward<kFunction>(handle, out);
  Link& link = *Of(handle);
  std::lock_guard<std::mutex> lock(link.mu);
  if (std::optional<nvJitLinkResult> answer = recorded(link, out)) {
    return *answer;
  }
  if (!Materialize(link)) return Unavailable();
  return (RealNvJitLink().*kFunction)(link.real, out);
}

// The source files PTX names (`.file`), as this process's stat sees them:
// the real nvJitLink stats each in the caller's file system and writes its
// size and time into the cubin, so the daemon's link runs with files that
// say the same (none for other input types). nullopt where that cannot be
// done exactly: a name relative to the working directory (a link has
// none), a directive not read exactly, a source that is no regular file.
std::optional<std::vector<jitcache::ptxas_wire::Source>> SourcesOf(
    nvJitLinkInputType type, const void* data, size_t size) {
  if (type != 2) return std::vector<jitcache::ptxas_wire::Source>();
  std::string why;
  const std::optional<std::vector<std::string>> files =
      jitcache::PtxSourceFiles(
          std::string_view(static_cast<const char*>(data), size), &why);
  if (!files.has_value()) return std::nullopt;
  for (const std::string& file : *files) {
    if (!file.starts_with('/')) return std::nullopt;
  }
  return jitcache::ptxas_wire::StatSources(*files, &why);
}

// Whether the daemon may answer this add: a type it takes, bytes, a
// name, before completion, a copy that holds all the real nvJitLink reads
// of the input (input_extent.h), and the source files it names, if any,
// looked at (`sources`).
bool Answerable(const Link& link, nvJitLinkInputType type, const void* data,
                size_t size, const char* name,
                std::vector<jitcache::ptxas_wire::Source>* sources) {
  if (link.completed || !KindOf(type).has_value() || data == nullptr ||
      size == 0 || name == nullptr ||
      !jitcache::nvjitlink::CopyReadsAsTheCallers(type, data, size)) {
    return false;
  }
  std::optional<std::vector<jitcache::ptxas_wire::Source>> stats =
      SourcesOf(type, data, size);
  if (!stats.has_value()) return false;
  *sources = *std::move(stats);
  return true;
}

// How the daemon's store files an NVJITLINK_INPUT_ANY input (nvJitLink
// itself types it by its bytes, in the daemon's link as in the caller's):
// an ELF file as a cubin, an archive as a library, anything else as PTX.
int StoreKindOf(const void* data, size_t size) {
  const std::string_view bytes(static_cast<const char*>(data), size);
  if (bytes.starts_with("\x7f"
                        "ELF"))
    return 2;
  if (bytes.starts_with("!<arch>\n")) return 6;
  return 1;
}

// An input the daemon may answer: from its record of the calls so far, or
// by the real nvJitLink, the link moved there first. `data` lives at least
// as long as the call.
nvJitLinkResult AddInput(Link& link, nvJitLinkInputType type, const void* data,
                         size_t size, const char* name,
                         std::vector<jitcache::ptxas_wire::Source> sources) {
  jitcache::link_wire::Input input;
  input.sources = std::move(sources);
  input.typed_by_content = type == kInputAny;
  input.kind = input.typed_by_content ? StoreKindOf(data, size) : *KindOf(type);
  input.name = name;
  input.bytes.assign(static_cast<const char*>(data), size);
  if (link.eligible && TheDaemon() != nullptr) {
    input.digest = jitcache::Digest::Of(input.bytes).Hex();
  }
  link.inputs.push_back(std::move(input));
  if (link.real == nullptr) {
    if (std::optional<Trace> record = Recorded(link, false)) {
      link.answered = *std::move(record);
      return Answer(link);
    }
    Why("no record of these inputs");
    input = std::move(link.inputs.back());
    link.inputs.pop_back();
    if (!Materialize(link)) return Unavailable();
    link.inputs.push_back(std::move(input));
  }
  // The caller's own bytes: what the real nvJitLink reads of them, as it
  // would without us (the copy serves replays and the daemon).
  const nvJitLinkResult result = RealNvJitLink().nvJitLinkAddData(
      link.real, type, data, size,
      link.real_names.emplace_back(link.inputs.back().name).c_str());
  RecordRealStep(link, result);
  return result;
}

// A whole regular file, or nullopt (absent, unreadable, a directory, or
// empty: the real nvJitLink says what those are).
std::optional<std::string> ReadRegularFile(const char* path) {
  std::optional<std::string> bytes =
      jitcache::ReadWholeFile(path, /*regular_only=*/true);
  if (bytes.has_value() && bytes->empty()) return std::nullopt;
  return bytes;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkCreate(
    nvJitLinkHandle* handle, uint32_t num_options, const char** options) {
  if (handle == nullptr || (num_options > 0 && options == nullptr)) {
    return Forward<&Real::nvJitLinkCreate>(handle, num_options, options);
  }
  auto link = std::make_unique<Link>();
  for (uint32_t i = 0; i < num_options; ++i) {
    if (options[i] == nullptr) {
      link->eligible = false;
      break;
    }
    link->options.push_back(options[i]);
  }
  if (std::optional<Trace> record = Recorded(*link, false)) {
    link->answered = *std::move(record);
    *handle = reinterpret_cast<nvJitLinkHandle>(link.release());
    return Answer(*Of(*handle));
  }
  Why(link->eligible ? "no record of nvJitLinkCreate with these options "
                       "(or options the daemon cannot answer exactly)"
                     : "an option that is no C string");
  const Real& r = RealNvJitLink();
  if (r.nvJitLinkCreate == nullptr) return Unavailable();
  const nvJitLinkResult result =
      r.nvJitLinkCreate(&link->real, num_options, options);
  if (link->real == nullptr) {
    *handle = nullptr;
    return result;
  }
  RecordRealStep(*link, result);
  *handle = reinterpret_cast<nvJitLinkHandle>(link.release());
  return result;
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkDestroy(
    nvJitLinkHandle* handle) {
  if (handle == nullptr || *handle == nullptr) {
    return Forward<&Real::nvJitLinkDestroy>(handle);
  }
  Link* link = Of(*handle);
  nvJitLinkResult result = kSuccess;
  if (link->real != nullptr) {
    result = RealNvJitLink().nvJitLinkDestroy(&link->real);
  }
  delete link;
  *handle = nullptr;
  return result;
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkAddData(
    nvJitLinkHandle handle, nvJitLinkInputType type, const void* data,
    size_t size, const char* name) {
  if (handle == nullptr) {
    return Forward<&Real::nvJitLinkAddData>(handle, type, data, size, name);
  }
  Link& link = *Of(handle);
  std::lock_guard<std::mutex> lock(link.mu);
  std::vector<jitcache::ptxas_wire::Source> sources;
  if (!Answerable(link, type, data, size, name, &sources)) {
    Why("an input the daemon does not take, read past its size or naming "
        "source files it cannot look at, or an add after completion");
    link.eligible = false;
    if (!Materialize(link)) return Unavailable();
    return RealNvJitLink().nvJitLinkAddData(link.real, type, data, size, name);
  }
  return AddInput(link, type, data, size, name, std::move(sources));
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkAddFile(
    nvJitLinkHandle handle, nvJitLinkInputType type, const char* file) {
  if (handle == nullptr) {
    return Forward<&Real::nvJitLinkAddFile>(handle, type, file);
  }
  Link& link = *Of(handle);
  std::lock_guard<std::mutex> lock(link.mu);
  // The real nvJitLink reads the whole file when it is added and names the
  // input by the path as given: the same answers as nvJitLinkAddData of
  // those bytes under that name (NvJitLinkDifferential shows it for every
  // type). A file that cannot be read here as a non-empty regular file is
  // the real one's.
  // NVJITLINK_INPUT_ANY too: the daemon's nvJitLink is handed the bytes
  // as ANY, and types them by their bytes as the caller's would (PTX named
  // .cubin links as PTX; NvJitLinkDifferential shows it).
  const bool any = type == kInputAny;
  std::optional<std::string> bytes;
  if (file != nullptr && (KindOf(type).has_value() || any)) {
    bytes = ReadRegularFile(file);
  }
  std::vector<jitcache::ptxas_wire::Source> sources;
  const bool answerable =
      bytes.has_value() && (any ? !link.completed
                                : Answerable(link, type, bytes->data(),
                                             bytes->size(), file, &sources));
  if (!answerable) {
    Why("nvJitLinkAddFile of a file not read here, or of an input the "
        "daemon does not take");
    link.eligible = false;
    if (!Materialize(link)) return Unavailable();
    return RealNvJitLink().nvJitLinkAddFile(link.real, type, file);
  }
  const std::string& kept = link.file_bytes.emplace_back(*std::move(bytes));
  return AddInput(link, type, kept.data(), kept.size(), file,
                  std::move(sources));
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkComplete(
    nvJitLinkHandle handle) {
  if (handle == nullptr) {
    return Forward<&Real::nvJitLinkComplete>(handle);
  }
  Link& link = *Of(handle);
  std::lock_guard<std::mutex> lock(link.mu);
  // The daemon links only what nvJitLinkCreate accepted (see Recorded).
  const bool created =
      !link.answered.steps.empty() && link.answered.steps[0].result == kSuccess;
  if (!link.completed && created) {
    if (std::optional<Trace> record = Recorded(link, true)) {
      // Used only if every call answered so far was answered the same by
      // the daemon's nvJitLink.
      const std::vector<Step>& asked = link.answered.steps;
      const bool same = record->steps.size() == asked.size() + 1 &&
                        std::equal(asked.begin(), asked.end(),
                                   record->steps.begin(), SameCall);
      if (same) {
        if (link.real != nullptr) {
          RealNvJitLink().nvJitLinkDestroy(&link.real);
        }
        link.answered = *std::move(record);
        link.completed = true;
        return Answer(link);
      }
      Why("the daemon's nvJitLink answered an earlier call differently");
      Disprove(link);
    }
  }
  if (!Materialize(link)) return Unavailable();
  link.completed = true;
  return RealNvJitLink().nvJitLinkComplete(link.real);
}

// Outputs and logs: from the daemon's record while it answers the link.
__attribute__((visibility("default"))) nvJitLinkResult
nvJitLinkGetLinkedCubinSize(nvJitLinkHandle handle, size_t* size) {
  return OnLink<&Real::nvJitLinkGetLinkedCubinSize>(
      handle, size, &OutputSize<&Trace::cubin_size_result, &Trace::cubin>);
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkGetLinkedCubin(
    nvJitLinkHandle handle, void* cubin) {
  return OnLink<&Real::nvJitLinkGetLinkedCubin>(
      handle, cubin, &Output<&Trace::cubin_result, &Trace::cubin, void*>);
}

__attribute__((visibility("default"))) nvJitLinkResult
nvJitLinkGetLinkedPtxSize(nvJitLinkHandle handle, size_t* size) {
  return OnLink<&Real::nvJitLinkGetLinkedPtxSize>(
      handle, size, &OutputSize<&Trace::ptx_size_result, &Trace::ptx>);
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkGetLinkedPtx(
    nvJitLinkHandle handle, char* ptx) {
  return OnLink<&Real::nvJitLinkGetLinkedPtx>(
      handle, ptx, &Output<&Trace::ptx_result, &Trace::ptx, char*>);
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkGetErrorLogSize(
    nvJitLinkHandle handle, size_t* size) {
  return OnLink<&Real::nvJitLinkGetErrorLogSize>(
      handle, size, &LogSize<&Step::error_size_result, &Step::error_log>);
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkGetErrorLog(
    nvJitLinkHandle handle, char* log) {
  return OnLink<&Real::nvJitLinkGetErrorLog>(
      handle, log, &Log<&Step::error_size_result, &Step::error_log>);
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkGetInfoLogSize(
    nvJitLinkHandle handle, size_t* size) {
  return OnLink<&Real::nvJitLinkGetInfoLogSize>(
      handle, size, &LogSize<&Step::info_size_result, &Step::info_log>);
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkGetInfoLog(
    nvJitLinkHandle handle, char* log) {
  return OnLink<&Real::nvJitLinkGetInfoLog>(
      handle, log, &Log<&Step::info_size_result, &Step::info_log>);
}

__attribute__((visibility("default"))) nvJitLinkResult nvJitLinkVersion(
    unsigned int* major, unsigned int* minor) {
  // The daemon loaded the very file the real one would be opened from: its
  // version is that file's, and the real one need not be loaded for it.
  if (major != nullptr && minor != nullptr && TheDaemon() != nullptr &&
      TheDaemon()->nvjitlink.major != 0) {
    *major = TheDaemon()->nvjitlink.major;
    *minor = TheDaemon()->nvjitlink.minor;
    return kSuccess;
  }
  return Forward<&Real::nvJitLinkVersion>(major, minor);
}

// The versioned names nvJitLink.h's inline wrappers call.
#define JITCACHE_NVJITLINK_VERSIONED(name, ...)        \
  __attribute__((visibility("default"), alias(#name))) \
  nvJitLinkResult __##name##_13_0(__VA_ARGS__);
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkCreate, nvJitLinkHandle*, uint32_t,
                             const char**)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkDestroy, nvJitLinkHandle*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkAddData, nvJitLinkHandle,
                             nvJitLinkInputType, const void*, size_t,
                             const char*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkAddFile, nvJitLinkHandle,
                             nvJitLinkInputType, const char*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkComplete, nvJitLinkHandle)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkGetLinkedCubinSize, nvJitLinkHandle,
                             size_t*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkGetLinkedCubin, nvJitLinkHandle, void*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkGetLinkedPtxSize, nvJitLinkHandle,
                             size_t*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkGetLinkedPtx, nvJitLinkHandle, char*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkGetErrorLogSize, nvJitLinkHandle, size_t*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkGetErrorLog, nvJitLinkHandle, char*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkGetInfoLogSize, nvJitLinkHandle, size_t*)
JITCACHE_NVJITLINK_VERSIONED(nvJitLinkGetInfoLog, nvJitLinkHandle, char*)
#undef JITCACHE_NVJITLINK_VERSIONED

}  // extern "C"
