// libnvvm.so.4 from jitcache: libNVVM's C API, answered by the node's
// jitcached when it can, and by the real libNVVM otherwise, with identical
// results. A program picks it up, unmodified, through LD_PRELOAD (numba-cuda
// 0.25 and later take a libnvvm.so.4 already loaded); see README:
// "Compiles through libNVVM".
//
// libNVVM does nothing when a module is added but copy it (a module of
// garbage is taken; NvvmDifferential shows it), and it reads no file: a
// program is the calls that shaped it, and only a compile or a verify
// answers from them. So this library answers the adds itself, keeps the
// calls, and at nvvmCompileProgram or nvvmVerifyProgram asks the daemon
// for what the real libNVVM answers to that very sequence of calls: first
// by the modules' digests (a hit), then with their bytes (a miss, which
// the daemon runs in a confined worker with its libNVVM, the caller's
// very file). The answer holds the call's result and the log and compiled
// result the caller then reads. Anything else (a read before any compile,
// a NULL argument, a daemon that does not answer) moves the program to
// the real libNVVM, opened by path from $JITCACHE_REAL_NVVM, else
// $CUDA_HOME/nvvm/lib64, else /usr/local/cuda/nvvm/lib64, where the calls
// made so far are made again first.
//
// Like libnvJitLink.so.13 it asks over the daemon's framed socket and loads
// nothing but libc and libstdc++ (libcrypto once it hashes a module).
// The environment libNVVM reads is read at every compile, as libNVVM reads
// it; a program given LLVM's own options (-Xopt, -Xllc, ...), and every
// later program of its process, goes to the real libNVVM (they are process
// state there: see SetsProcessState).
// JITCACHE_NVVM_VERBOSE=1 says on stderr why a program went to the real
// libNVVM; JITCACHE_NVVM_DISABLE=1 sends every program there.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/wire/framed_channel.h"
#include "client/wire/link_wire.h"
#include "client/wire/nvvm_wire.h"
#include "client/wire/real_library.h"
#include "client/wire/wire_values.h"
#include "common/digest.h"
#include "common/file_stamp.h"
#include "common/framed_protocol.h"
#include "common/paths.h"

// libNVVM's C API (nvvm.h), spelled here: the build has no nvvm.h.
extern "C" {
typedef struct _nvvmProgram* nvvmProgram;
typedef int nvvmResult;
}

namespace {

using jitcache::nvvm_wire::Answer;
using jitcache::nvvm_wire::Call;
using jitcache::nvvm_wire::CallKind;

constexpr nvvmResult kSuccess = 0;
constexpr nvvmResult kOutOfMemory = 1;
constexpr nvvmResult kInvalidProgram = 5;

// How long a compile the daemon runs may take before this process
// compiles itself (the daemon's own limit ends it sooner).
constexpr std::chrono::minutes kCompileTimeout(15);
// An ask by digests is a lookup: the channel's own limit for one.
constexpr std::chrono::milliseconds kLookupTimeout(500);

#define JITCACHE_NVVM_FUNCTIONS(X)                                            \
  X(nvvmGetErrorString, const char*, nvvmResult)                              \
  X(nvvmVersion, nvvmResult, int*, int*)                                      \
  X(nvvmIRVersion, nvvmResult, int*, int*, int*, int*)                        \
  X(nvvmCreateProgram, nvvmResult, nvvmProgram*)                              \
  X(nvvmDestroyProgram, nvvmResult, nvvmProgram*)                             \
  X(nvvmAddModuleToProgram, nvvmResult, nvvmProgram, const char*, size_t,     \
    const char*)                                                              \
  X(nvvmLazyAddModuleToProgram, nvvmResult, nvvmProgram, const char*, size_t, \
    const char*)                                                              \
  X(nvvmCompileProgram, nvvmResult, nvvmProgram, int, const char**)           \
  X(nvvmVerifyProgram, nvvmResult, nvvmProgram, int, const char**)            \
  X(nvvmGetCompiledResultSize, nvvmResult, nvvmProgram, size_t*)              \
  X(nvvmGetCompiledResult, nvvmResult, nvvmProgram, char*)                    \
  X(nvvmGetProgramLogSize, nvvmResult, nvvmProgram, size_t*)                  \
  X(nvvmGetProgramLog, nvvmResult, nvvmProgram, char*)                        \
  X(nvvmDisableConcurrentAPI, nvvmResult)

// The real libNVVM, loaded on first need.
struct Real {
  void* lib = nullptr;
#define JITCACHE_NVVM_MEMBER(name, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  JITCACHE_NVVM_FUNCTIONS(JITCACHE_NVVM_MEMBER)
#undef JITCACHE_NVVM_MEMBER
};

constexpr const char* kRealEnv = "JITCACHE_REAL_NVVM";
constexpr const char* kFileName = "libnvvm.so.4";
constexpr const char* kToolkitDir = "nvvm/lib64";

const Real& RealNvvm() {
  static const Real* real = [] {
    auto* r = new Real();
    r->lib = jitcache::OpenRealLibrary(kRealEnv, kFileName, kToolkitDir);
    if (r->lib == nullptr) return r;
#define JITCACHE_NVVM_RESOLVE(name, ...) \
  r->name = reinterpret_cast<decltype(r->name)>(dlsym(r->lib, #name));
    JITCACHE_NVVM_FUNCTIONS(JITCACHE_NVVM_RESOLVE)
#undef JITCACHE_NVVM_RESOLVE
    // A library without the whole C API (nvvmDisableConcurrentAPI is not
    // part of nvvm.h) is none: every call then says it cannot be loaded.
    const bool whole = r->nvvmGetErrorString && r->nvvmVersion &&
                       r->nvvmIRVersion && r->nvvmCreateProgram &&
                       r->nvvmDestroyProgram && r->nvvmAddModuleToProgram &&
                       r->nvvmLazyAddModuleToProgram && r->nvvmCompileProgram &&
                       r->nvvmVerifyProgram && r->nvvmGetCompiledResultSize &&
                       r->nvvmGetCompiledResult && r->nvvmGetProgramLogSize &&
                       r->nvvmGetProgramLog;
    if (!whole) {
      std::fprintf(stderr,
                   "jitcache libnvvm.so.4: the real libNVVM lacks part of "
                   "its C API\n");
      auto* none = new Real();
      none->lib = r->lib;
      return none;
    }
    return r;
  }();
  return *real;
}

bool Verbose() {
  static const bool verbose = jitcache::EnvFlag("JITCACHE_NVVM_VERBOSE");
  return verbose;
}

void Why(const char* what) {
  if (Verbose()) {
    std::fprintf(stderr, "jitcache libnvvm.so.4: the real libNVVM: %s\n", what);
  }
}

// What libNVVM 13.0 reads from the environment (its getenv calls during a
// compile): the IR version check (NVVM_IR_VER_CHK), the version it claims
// (LIBNVVM_NVVM_VERSION, NV_NVVM_VERSION), the producer it writes, a log
// file, its concurrency; by prefix, so that a variable of the same family
// another version reads is not missed. The daemon's workers run without
// them (the same rule), so a caller with any of them set compiles itself.
constexpr const char* kEnvironmentThatChangesAnswers[] = {
    "NVVM_", "LIBNVVM_", "NV_NVVM_",
    "LLVM_OVERRIDE_PRODUCER=", "AS_SECURE_LOG_FILE="};

// The node's daemon, over its framed socket, when it runs the very file this
// process would open as the real libNVVM.
struct Daemon {
  explicit Daemon(std::string socket) : channel(std::move(socket)) {}
  jitcache::FramedChannel channel;
  jitcache::link_wire::Library libnvvm;  // the daemon's account of it
};

// Why the environment, as it is now, keeps the daemon from answering
// (nullopt when it does not). Read at every call that answers, as the real
// libNVVM reads it at every compile: a program may set NVVM_IR_VER_CHK
// after its first compile.
std::optional<std::string> EnvironmentChangesAnswers() {
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry = *e;
    for (const char* prefix : kEnvironmentThatChangesAnswers) {
      if (entry.starts_with(prefix)) {
        return std::string(entry.substr(0, entry.find('='))) +
               " is set (the real libNVVM answers otherwise)";
      }
    }
  }
  return std::nullopt;
}

// LLVM's own options, given through -Xopt, -Xllc, -Xlnk and the like, are
// the real libNVVM's process state: they stay set for every later program
// of the process (-Xopt -unroll-count=4 leaves `.pragma "nounroll"` in a
// later plain program's PTX), some print to stderr (-Xllc
// -debug-pass=Structure) and some end the process (-Xopt -help, -Xllc
// -version). None of that can be answered from a clean worker: such a
// program, and every program of this process after it, is the real
// libNVVM's, in this process.
bool SetsProcessState(const std::string& option) {
  return option.starts_with("-X");
}
std::atomic<bool>& ProcessStateWasSet() {
  static std::atomic<bool> set{false};
  return set;
}

// Why a compile or verify goes to the real libNVVM, whatever the daemon
// could say (nullopt: the daemon may answer it). Run records options that
// set process state before it asks.
std::optional<std::string> RealLibraryMustAnswer() {
  if (std::optional<std::string> why = EnvironmentChangesAnswers()) return why;
  if (ProcessStateWasSet().load()) {
    return std::string(
        "this program or an earlier one of this process set the real "
        "libNVVM's process state (-X options)");
  }
  return std::nullopt;
}

// Why no daemon answers here, or nullptr when one does.
std::optional<std::string> Unusable(Daemon& d) {
  std::string buffer;
  const std::optional<std::string_view> ping = d.channel.Ask(
      std::string(1, jitcache::framed_protocol::kToolkit), buffer);
  std::optional<std::vector<jitcache::link_wire::Library>> libraries;
  if (ping.has_value()) libraries = jitcache::link_wire::DecodeLibraries(*ping);
  if (!libraries.has_value()) {
    return "no daemon answers on the framed socket beside " +
           jitcache::DefaultClientSocketPath();
  }
  // A daemon that names no libNVVM runs none.
  if (std::none_of(libraries->begin(), libraries->end(),
                   [](const jitcache::link_wire::Library& lib) {
                     return lib.name == kFileName;
                   })) {
    return "the daemon runs no libNVVM (jitcached --libnvvm)";
  }
  std::string why;
  const std::optional<size_t> same =
      jitcache::SameRealLibrary(jitcache::link_wire::Identities(*libraries),
                                kRealEnv, kFileName, kToolkitDir, &why);
  if (!same.has_value()) return why;
  d.libnvvm = (*libraries)[*same];
  return std::nullopt;
}

// One for the process; nullptr when there is none to use.
Daemon* TheDaemon() {
  static Daemon* daemon = []() -> Daemon* {
    if (jitcache::EnvFlag("JITCACHE_NVVM_DISABLE")) return nullptr;
    auto d = std::make_unique<Daemon>(jitcache::DefaultClientSocketPath());
    if (std::optional<std::string> why = Unusable(*d)) {
      if (Verbose()) {
        std::fprintf(stderr,
                     "jitcache libnvvm.so.4: not using the daemon: %s\n",
                     why->c_str());
      }
      return nullptr;
    }
    return d.release();
  }();
  return daemon;
}

// A program as the caller sees it: its calls, answered here and from the
// daemon while it can, then by a real libNVVM program that was given the
// same calls.
struct Program {
  std::mutex mu;
  // Never moves: the real libNVVM is handed each module's name by pointer.
  std::deque<Call> calls;
  // The daemon's answer to the last call (a compile or a verify); the reads
  // after it are answered from it.
  std::optional<Answer> answered;
  nvvmProgram real = nullptr;
};

Program* Of(nvvmProgram p) { return reinterpret_cast<Program*>(p); }

// The answer when a handle's state is beyond the real library (it could
// not be loaded): out of memory, the nearest libNVVM has.
nvvmResult Unavailable() {
  std::fprintf(stderr,
               "jitcache libnvvm.so.4: the real libNVVM cannot be loaded\n");
  return kOutOfMemory;
}

// A call the real libNVVM answers as it stands (a null handle is none of
// ours: the real one says what that is).
template <auto kFunction, typename... Args>
auto Forward(Args... args) {
  const Real& r = RealNvvm();
  using Result = decltype((r.*kFunction)(args...));
  if (r.*kFunction == nullptr) {
    if constexpr (std::is_same_v<Result, nvvmResult>) {
      return Unavailable();
    } else {
      return static_cast<Result>(nullptr);
    }
  }
  return (r.*kFunction)(args...);
}

// Makes one call to the real program.
nvvmResult RealCall(const Real& r, nvvmProgram real, const Call& call) {
  switch (call.kind) {
    case CallKind::kAddModule:
    case CallKind::kLazyAddModule: {
      auto add = call.kind == CallKind::kAddModule
                     ? r.nvvmAddModuleToProgram
                     : r.nvvmLazyAddModuleToProgram;
      return add(real, call.module.data(), call.module.size(),
                 call.unnamed ? nullptr : call.name.c_str());
    }
    case CallKind::kCompile:
    case CallKind::kVerify: {
      std::vector<const char*> options;
      for (const std::string& o : call.options) options.push_back(o.c_str());
      auto run = call.kind == CallKind::kCompile ? r.nvvmCompileProgram
                                                 : r.nvvmVerifyProgram;
      return run(real, static_cast<int>(options.size()),
                 options.empty() ? nullptr : options.data());
    }
  }
  return kSuccess;
}

// Moves the program to a real libNVVM program: the calls answered so far
// are made again there (libNVVM is deterministic: they answer the same).
// False when the real libNVVM cannot be had.
bool Materialize(Program& program) {
  if (program.real != nullptr) return true;
  const Real& r = RealNvvm();
  if (r.nvvmCreateProgram == nullptr) return false;
  if (r.nvvmCreateProgram(&program.real) != kSuccess ||
      program.real == nullptr) {
    program.real = nullptr;
    return false;
  }
  for (const Call& call : program.calls) RealCall(r, program.real, call);
  program.answered.reset();
  return true;
}

// The daemon's answer to the program's calls (the last a compile or a
// verify), by digests first and then with the modules.
std::optional<Answer> Ask(const Program& program) {
  Daemon* daemon = TheDaemon();
  if (daemon == nullptr) return std::nullopt;
  jitcache::FramedChannel::Refusal refused;
  for (const bool with_modules : {false, true}) {
    const std::string payload =
        std::string(1, jitcache::framed_protocol::kNvvm) +
        jitcache::nvvm_wire::Encode(daemon->libnvvm, program.calls,
                                    with_modules);
    std::string buffer;
    const std::optional<std::string_view> bytes = daemon->channel.Ask(
        payload, buffer, with_modules ? kCompileTimeout : kLookupTimeout,
        &refused);
    if (bytes.has_value()) return jitcache::nvvm_wire::Decode(*bytes);
    // The daemon lacks the modules (NOT_FOUND): sent with the request. Any
    // other refusal would only be given again.
    if (refused.code != 0 && refused.code != jitcache::wire::Code::kNotFound)
      break;
  }
  Why(refused.code != 0 ? ("the daemon refused it: " + refused.message).c_str()
                        : "the daemon did not answer");
  return std::nullopt;
}

// A module added: kept here while the daemon may answer the program.
nvvmResult AddModule(nvvmProgram handle, CallKind kind, const char* buffer,
                     size_t size, const char* name) {
  if (handle == nullptr) {
    return kind == CallKind::kAddModule
               ? Forward<&Real::nvvmAddModuleToProgram>(handle, buffer, size,
                                                        name)
               : Forward<&Real::nvvmLazyAddModuleToProgram>(handle, buffer,
                                                            size, name);
  }
  Program& program = *Of(handle);
  std::lock_guard<std::mutex> lock(program.mu);
  Call& call = program.calls.emplace_back();
  call.kind = kind;
  call.unnamed = name == nullptr;
  if (name != nullptr) call.name = name;
  if (buffer == nullptr) {
    // libNVVM's own answer (NVVM_ERROR_INVALID_INPUT), from the real one.
    program.calls.pop_back();
    Why("a module with no buffer");
    if (!Materialize(program)) return Unavailable();
  }
  if (program.real != nullptr) {
    const Real& r = RealNvvm();
    auto add = kind == CallKind::kAddModule ? r.nvvmAddModuleToProgram
                                            : r.nvvmLazyAddModuleToProgram;
    const nvvmResult result = add(program.real, buffer, size, name);
    if (buffer != nullptr) program.calls.pop_back();
    return result;
  }
  // libNVVM copies the bytes when the module is added (a buffer changed
  // afterwards compiles as it was), and takes any bytes.
  call.module.assign(buffer, size);
  if (TheDaemon() != nullptr)
    call.digest = jitcache::Digest::Of(call.module).Hex();
  program.answered.reset();
  return kSuccess;
}

// A compile or verify: the daemon's answer, or the real libNVVM's.
nvvmResult Run(nvvmProgram handle, CallKind kind, int num_options,
               const char** options) {
  if (handle == nullptr) {
    return kind == CallKind::kCompile ? Forward<&Real::nvvmCompileProgram>(
                                            handle, num_options, options)
                                      : Forward<&Real::nvvmVerifyProgram>(
                                            handle, num_options, options);
  }
  Program& program = *Of(handle);
  std::lock_guard<std::mutex> lock(program.mu);
  bool answerable = program.real == nullptr && num_options >= 0 &&
                    (num_options == 0 || options != nullptr);
  Call call;
  call.kind = kind;
  for (int i = 0; answerable && i < num_options; ++i) {
    if (options[i] == nullptr) {
      answerable = false;
    } else {
      call.options.emplace_back(options[i]);
    }
  }
  // Whoever answers, options that set the real libNVVM's process state
  // are seen (a program already with the real libNVVM gives them to it).
  for (int i = 0; num_options > 0 && options != nullptr && i < num_options;
       ++i) {
    if (options[i] != nullptr && SetsProcessState(options[i])) {
      ProcessStateWasSet().store(true);
    }
  }
  if (!answerable && program.real == nullptr) {
    Why("options the daemon cannot take (NULL, or a negative count)");
  } else if (answerable) {
    if (std::optional<std::string> why = RealLibraryMustAnswer()) {
      Why(why->c_str());
      answerable = false;
    }
  }
  if (answerable) {
    program.calls.push_back(std::move(call));
    if (std::optional<Answer> answer = Ask(program)) {
      program.answered = *std::move(answer);
      return program.answered->result;
    }
    program.calls.pop_back();
  }
  if (!Materialize(program)) return Unavailable();
  const Real& r = RealNvvm();
  auto run =
      kind == CallKind::kCompile ? r.nvvmCompileProgram : r.nvvmVerifyProgram;
  return run(program.real, num_options, options);
}

// A read after a compile or verify: from the daemon's answer while it
// answers the program (`from_answer`), else from the real program.
template <auto kFunction, typename Out>
nvvmResult Read(nvvmProgram handle, Out out,
                std::optional<nvvmResult> (*from_answer)(const Answer&, Out)) {
  if (handle == nullptr) return Forward<kFunction>(handle, out);
  Program& program = *Of(handle);
  std::lock_guard<std::mutex> lock(program.mu);
  if (program.real == nullptr && program.answered.has_value() &&
      out != nullptr) {
    if (std::optional<nvvmResult> result =
            from_answer(*program.answered, out)) {
      return *result;
    }
  }
  if (!Materialize(program)) return Unavailable();
  return (RealNvvm().*kFunction)(program.real, out);
}

// The sizes and buffers, as the real reads gave them: a size the real call
// refused is answered with its result alone (it left *size as it was).
template <int Answer::*kResult, std::string Answer::*kBytes>
std::optional<nvvmResult> SizeOf(const Answer& a, size_t* size) {
  if (a.*kResult == kSuccess) *size = (a.*kBytes).size();
  return a.*kResult;
}

template <int Answer::*kSizeResult, int Answer::*kResult,
          std::string Answer::*kBytes>
std::optional<nvvmResult> BytesOf(const Answer& a, char* out) {
  // The real read was made only after a size it gave; a read it refused
  // wrote nothing (the worker's buffer is not the caller's).
  if (a.*kSizeResult != kSuccess) return std::nullopt;
  if (a.*kResult == kSuccess) {
    std::memcpy(out, (a.*kBytes).data(), (a.*kBytes).size());
  }
  return a.*kResult;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* nvvmGetErrorString(
    nvvmResult result) {
  return Forward<&Real::nvvmGetErrorString>(result);
}

__attribute__((visibility("default"))) nvvmResult nvvmVersion(int* major,
                                                              int* minor) {
  // The daemon loaded the very file the real one would be opened from
  // (and the version it claims can come from the environment).
  if (major != nullptr && minor != nullptr && TheDaemon() != nullptr &&
      TheDaemon()->libnvvm.major != 0 && !EnvironmentChangesAnswers()) {
    *major = static_cast<int>(TheDaemon()->libnvvm.major);
    *minor = static_cast<int>(TheDaemon()->libnvvm.minor);
    return kSuccess;
  }
  return Forward<&Real::nvvmVersion>(major, minor);
}

__attribute__((visibility("default"))) nvvmResult nvvmIRVersion(
    int* major_ir, int* minor_ir, int* major_dbg, int* minor_dbg) {
  const Daemon* d = TheDaemon();
  if (major_ir != nullptr && minor_ir != nullptr && major_dbg != nullptr &&
      minor_dbg != nullptr && d != nullptr && d->libnvvm.ir_major != 0 &&
      !EnvironmentChangesAnswers()) {
    *major_ir = static_cast<int>(d->libnvvm.ir_major);
    *minor_ir = static_cast<int>(d->libnvvm.ir_minor);
    *major_dbg = static_cast<int>(d->libnvvm.debug_major);
    *minor_dbg = static_cast<int>(d->libnvvm.debug_minor);
    return kSuccess;
  }
  return Forward<&Real::nvvmIRVersion>(major_ir, minor_ir, major_dbg,
                                       minor_dbg);
}

__attribute__((visibility("default"))) nvvmResult nvvmCreateProgram(
    nvvmProgram* handle) {
  if (handle == nullptr) return Forward<&Real::nvvmCreateProgram>(handle);
  auto program = std::make_unique<Program>();
  if (TheDaemon() == nullptr) {
    // Every call goes to the real libNVVM: make its program now.
    const Real& r = RealNvvm();
    if (r.nvvmCreateProgram == nullptr) return Unavailable();
    const nvvmResult result = r.nvvmCreateProgram(&program->real);
    if (result != kSuccess || program->real == nullptr) {
      *handle = nullptr;
      return result;
    }
  }
  *handle = reinterpret_cast<nvvmProgram>(program.release());
  return kSuccess;
}

__attribute__((visibility("default"))) nvvmResult nvvmDestroyProgram(
    nvvmProgram* handle) {
  if (handle == nullptr || *handle == nullptr) {
    return Forward<&Real::nvvmDestroyProgram>(handle);
  }
  Program* program = Of(*handle);
  nvvmResult result = kSuccess;
  if (program->real != nullptr) {
    result = RealNvvm().nvvmDestroyProgram(&program->real);
  }
  delete program;
  *handle = nullptr;
  return result;
}

__attribute__((visibility("default"))) nvvmResult nvvmAddModuleToProgram(
    nvvmProgram handle, const char* buffer, size_t size, const char* name) {
  return AddModule(handle, CallKind::kAddModule, buffer, size, name);
}

__attribute__((visibility("default"))) nvvmResult nvvmLazyAddModuleToProgram(
    nvvmProgram handle, const char* buffer, size_t size, const char* name) {
  return AddModule(handle, CallKind::kLazyAddModule, buffer, size, name);
}

__attribute__((visibility("default"))) nvvmResult nvvmCompileProgram(
    nvvmProgram handle, int num_options, const char** options) {
  return Run(handle, CallKind::kCompile, num_options, options);
}

__attribute__((visibility("default"))) nvvmResult nvvmVerifyProgram(
    nvvmProgram handle, int num_options, const char** options) {
  return Run(handle, CallKind::kVerify, num_options, options);
}

__attribute__((visibility("default"))) nvvmResult nvvmGetCompiledResultSize(
    nvvmProgram handle, size_t* size) {
  return Read<&Real::nvvmGetCompiledResultSize>(
      handle, size, &SizeOf<&Answer::output_size_result, &Answer::output>);
}

__attribute__((visibility("default"))) nvvmResult nvvmGetCompiledResult(
    nvvmProgram handle, char* buffer) {
  return Read<&Real::nvvmGetCompiledResult>(
      handle, buffer,
      &BytesOf<&Answer::output_size_result, &Answer::output_result,
               &Answer::output>);
}

__attribute__((visibility("default"))) nvvmResult nvvmGetProgramLogSize(
    nvvmProgram handle, size_t* size) {
  return Read<&Real::nvvmGetProgramLogSize>(
      handle, size, &SizeOf<&Answer::log_size_result, &Answer::log>);
}

__attribute__((visibility("default"))) nvvmResult nvvmGetProgramLog(
    nvvmProgram handle, char* buffer) {
  return Read<&Real::nvvmGetProgramLog>(
      handle, buffer,
      &BytesOf<&Answer::log_size_result, &Answer::log_result, &Answer::log>);
}

__attribute__((visibility("default"))) nvvmResult nvvmDisableConcurrentAPI() {
  return Forward<&Real::nvvmDisableConcurrentAPI>();
}

}  // extern "C"
