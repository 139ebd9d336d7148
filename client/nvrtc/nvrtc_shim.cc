// libnvrtc.so.13 from jitcache: NVRTC's C API, answered by the node's
// jitcached when it can, and by the real NVRTC otherwise, with identical
// results. A program picks it up, unmodified, when this library's directory
// comes first on LD_LIBRARY_PATH (see README: "Unmodified programs").
//
// A compile becomes a daemon request with the program's source, headers,
// options and name expressions, for the kind the options call for (LTO-IR
// with -dlto, cubin for a real architecture, PTX otherwise); the other kinds
// are asked for when first read. Whatever the daemon refuses (an option it
// does not take, a name expression that names nothing) or cannot answer
// (not running) is compiled by the real NVRTC, opened by path from
// $JITCACHE_REAL_NVRTC, else $CUDA_HOME/lib64, else /usr/local/cuda/lib64.
// Functions the daemon has no part in are forwarded to the real NVRTC.
// JITCACHE_NVRTC_VERBOSE=1 says on stderr why a compile went to the real
// NVRTC; JITCACHE_NVRTC_DISABLE=1 sends every compile there.
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/nvrtc/nvrtc_daemon.h"
#include "client/wire/real_library.h"
#include "client/wire/wire_values.h"
#include "common/compile_options.h"
#include "common/nvrtc_program.h"

namespace {

namespace compile_wire = jitcache::compile_wire;

// The kinds of object NVRTC makes: compile_wire's v1::Target numbers.
enum class CodeType {
  kPtx = jitcache::wire::Target::kPtx,
  kCubin = jitcache::wire::Target::kCubin,
  kLtoir = jitcache::wire::Target::kLtoir,
  kOptixIr = jitcache::wire::Target::kOptixIr,
};

const char* NameOf(CodeType kind) {
  switch (kind) {
    case CodeType::kCubin:
      return "cubin";
    case CodeType::kLtoir:
      return "ltoir";
    case CodeType::kOptixIr:
      return "optixir";
    default:
      return "ptx";
  }
}

const char* ServedName(int served) {
  switch (served) {
    case jitcache::wire::Served::kHit:
      return "HIT";
    case jitcache::wire::Served::kJoined:
      return "JOINED";
    default:
      return "MISS";
  }
}

// The real NVRTC, loaded on first need.
// Every entry point of the toolkit's libnvrtc.so.13.
#define JITCACHE_NVRTC_FUNCTIONS(X) \
  X(nvrtcGetErrorString)            \
  X(nvrtcVersion)                   \
  X(nvrtcGetNumSupportedArchs)      \
  X(nvrtcGetSupportedArchs)         \
  X(nvrtcCreateProgram)             \
  X(nvrtcDestroyProgram)            \
  X(nvrtcCompileProgram)            \
  X(nvrtcGetPTXSize)                \
  X(nvrtcGetPTX)                    \
  X(nvrtcGetCUBINSize)              \
  X(nvrtcGetCUBIN)                  \
  X(nvrtcGetLTOIRSize)              \
  X(nvrtcGetLTOIR)                  \
  X(nvrtcGetOptiXIRSize)            \
  X(nvrtcGetOptiXIR)                \
  X(nvrtcGetProgramLogSize)         \
  X(nvrtcGetProgramLog)             \
  X(nvrtcAddNameExpression)         \
  X(nvrtcGetLoweredName)            \
  X(nvrtcGetPCHHeapSize)            \
  X(nvrtcSetPCHHeapSize)            \
  X(nvrtcGetPCHCreateStatus)        \
  X(nvrtcGetPCHHeapSizeRequired)    \
  X(nvrtcSetFlowCallback)

struct Real {
  void* lib = nullptr;
#define JITCACHE_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  JITCACHE_NVRTC_FUNCTIONS(JITCACHE_NVRTC_MEMBER)
#undef JITCACHE_NVRTC_MEMBER
};

const Real& RealNvrtc() {
  static const Real* real = [] {
    auto* r = new Real();
    r->lib = jitcache::OpenRealLibrary("JITCACHE_REAL_NVRTC", "libnvrtc.so.13");
    if (r->lib == nullptr) return r;
#define JITCACHE_NVRTC_RESOLVE(name) \
  r->name = reinterpret_cast<decltype(r->name)>(dlsym(r->lib, #name));
    JITCACHE_NVRTC_FUNCTIONS(JITCACHE_NVRTC_RESOLVE)
#undef JITCACHE_NVRTC_RESOLVE
    return r;
  }();
  return *real;
}

// An object the daemon answered, where it was read from the socket (the
// caller's nvrtcGet* copies it out: the one copy NVRTC's API requires).
struct Object {
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  ~Object() {
    if (buffer.capacity() > std::string().capacity()) {
      jitcache::nvrtc::GiveBuffer(std::move(buffer));
    }
  }
  std::string_view bytes() const {
    const char* base = mapped.empty() ? buffer.data() : mapped.bytes().data();
    return {base + offset, size};
  }

  bool exists = false;  // NVRTC makes none of this kind for these options
  std::string buffer;   // the answer as read
  jitcache::MappedAnswer mapped;  // or as handed over in a sealed file
  size_t offset = 0, size = 0;
};

// A program as the caller sees it: ours until the real NVRTC has to
// compile it, then a wrapper of the real one.
struct Shim {
  std::mutex mu;
  std::string source, name;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> name_expressions;  // as added
  std::vector<std::string> options;           // of the last compile
  nvrtcProgram real = nullptr;                // the real NVRTC's, when used
  bool compiled = false;                      // by the daemon
  bool failed = false;  // and it did not compile: no lowered names
  std::string log;
  std::map<CodeType, Object> objects;
  std::map<std::string, std::string> lowered;
  // For a compile the real NVRTC runs (the daemon keeps its own limits).
  int (*flow_callback)(void*, void*) = nullptr;
  void* flow_payload = nullptr;
};

Shim* Of(nvrtcProgram prog) { return reinterpret_cast<Shim*>(prog); }

// What the options make NVRTC produce first.
CodeType PrimaryTarget(const std::vector<std::string>& options) {
  // With both, NVRTC refuses the options, and the compile's log says so.
  if (jitcache::AsksForOptixIr(options)) return CodeType::kOptixIr;
  if (jitcache::AsksForLtoIr(options)) return CodeType::kLtoir;
  bool real_arch = false;
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string& o = options[i];
    std::string arch;
    if (o.starts_with("-arch=") || o.starts_with("--gpu-architecture=")) {
      arch = o.substr(o.find('=') + 1);
    } else if ((o == "-arch" || o == "--gpu-architecture") &&
               i + 1 < options.size()) {
      arch = options[i + 1];
    }
    if (!arch.empty()) real_arch = arch.starts_with("sm_");
  }
  return real_arch ? CodeType::kCubin : CodeType::kPtx;
}

// Asks the daemon for `target`; false when it cannot or will not answer.
bool AskDaemon(Shim& p, CodeType target) {
  jitcache::nvrtc::Daemon* daemon = jitcache::nvrtc::Daemon::ForProcess();
  if (daemon == nullptr) return false;
  jitcache::nvrtc::CompileCall call;
  call.source = p.source;
  call.name = p.name;
  for (const auto& [n, c] : p.headers) call.headers.emplace_back(n, c);
  call.options = p.options;
  call.name_expressions = p.name_expressions;  // spans of the program's
  call.target = static_cast<int>(target);
  jitcache::nvrtc::Answer answer = daemon->Compile(call);
  const bool verbose = jitcache::nvrtc::Verbose();
  if (!answer.answered) {
    // NVRTC makes nothing of this kind for these options (a virtual
    // architecture has no cubin): so does the real one, with size 0.
    if (p.compiled &&
        answer.refusal.code == jitcache::wire::Code::kOutOfRange) {
      p.objects[target].exists = false;
      return true;
    }
    if (verbose) {
      std::fprintf(stderr,
                   "jitcache-nvrtc: %s: the daemon did not compile it (%s); "
                   "the real NVRTC does\n",
                   p.name.c_str(), answer.why.c_str());
    }
    return false;
  }
  const compile_wire::ResponseView& code = answer.response;
  const bool compiled = code.outcome == jitcache::wire::Outcome::kOk;
  // A file the compile did not find may be one the scan could not foresee
  // (the daemon's compile sees only what was sent): the real NVRTC, which
  // sees the caller's disk, gives the true answer.
  if (!compiled && jitcache::LogSaysAFileWasMissing(code.log)) return false;
  // How each answer was served: what a user asks when a process misses.
  if (verbose) {
    std::fprintf(stderr, "jitcache-nvrtc: %s: %s %s key %.*s\n", p.name.c_str(),
                 ServedName(code.served), NameOf(target),
                 static_cast<int>(code.cache_key.size()),
                 code.cache_key.data());
  }
  p.log = code.log;
  p.failed = !compiled;
  if (compiled) {
    for (const auto& [expr, low] : code.lowered_names) {
      p.lowered[std::string(expr)] = low;
    }
    Object& object = p.objects[target];
    object.exists = true;
    if (!code.object.empty()) {
      const char* base = answer.mapped.empty() ? answer.buffer.data()
                                               : answer.mapped.bytes().data();
      object.offset = static_cast<size_t>(code.object.data() - base);
      object.size = code.object.size();
    }
    // `code` views them no more. A mapped answer needs no buffer.
    if (answer.mapped.empty()) object.buffer = std::move(answer.buffer);
    object.mapped = std::move(answer.mapped);
  }
  p.compiled = true;
  return true;
}

nvrtcResult CompileWithReal(Shim& p) {
  const Real& real = RealNvrtc();
  if (real.lib == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  if (p.real != nullptr) real.nvrtcDestroyProgram(&p.real);
  std::vector<const char*> names, bodies;
  for (const auto& [n, c] : p.headers) {
    names.push_back(n.c_str());
    bodies.push_back(c.c_str());
  }
  nvrtcResult r = real.nvrtcCreateProgram(
      &p.real, p.source.c_str(), p.name.empty() ? nullptr : p.name.c_str(),
      static_cast<int>(names.size()), bodies.data(), names.data());
  if (r != NVRTC_SUCCESS) return r;
  if (p.flow_callback != nullptr && real.nvrtcSetFlowCallback != nullptr) {
    real.nvrtcSetFlowCallback(p.real, p.flow_callback, p.flow_payload);
  }
  for (const std::string& e : p.name_expressions) {
    r = real.nvrtcAddNameExpression(p.real, e.c_str());
    if (r != NVRTC_SUCCESS) return r;
  }
  std::vector<const char*> argv;
  for (const std::string& o : p.options) argv.push_back(o.c_str());
  return real.nvrtcCompileProgram(p.real, static_cast<int>(argv.size()),
                                  argv.data());
}

// The object of `kind`, asking the daemon for a kind not fetched yet;
// nullptr when the real NVRTC has the program.
const Object* ObjectOf(Shim& p, CodeType kind) {
  if (p.real != nullptr) return nullptr;
  if (!p.objects.count(kind) && !AskDaemon(p, kind)) {
    // The daemon will not give this kind: the real NVRTC compiles it all.
    CompileWithReal(p);
    return nullptr;
  }
  return &p.objects[kind];
}

template <typename SizeFn>
nvrtcResult GetSize(nvrtcProgram prog, size_t* size, CodeType kind,
                    SizeFn real_fn, bool text) {
  Shim* p = Of(prog);
  if (p == nullptr || size == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  std::lock_guard<std::mutex> lock(p->mu);
  const Object* object = ObjectOf(*p, kind);
  if (object == nullptr) return (RealNvrtc().*real_fn)(p->real, size);
  // Text (PTX) is a C string even when there is none: NVRTC gives "".
  const size_t bytes = object->exists ? object->size : 0;
  *size = bytes + (text ? 1 : 0);
  return NVRTC_SUCCESS;
}

template <typename GetFn>
nvrtcResult Get(nvrtcProgram prog, char* out, CodeType kind, GetFn real_fn,
                bool text) {
  Shim* p = Of(prog);
  if (p == nullptr || out == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  std::lock_guard<std::mutex> lock(p->mu);
  const Object* object = ObjectOf(*p, kind);
  if (object == nullptr) return (RealNvrtc().*real_fn)(p->real, out);
  const size_t bytes = object->exists ? object->size : 0;
  if (bytes > 0) std::memcpy(out, object->bytes().data(), bytes);
  if (text) out[bytes] = '\0';
  return NVRTC_SUCCESS;
}

}  // namespace

extern "C" {

const char* nvrtcGetErrorString(nvrtcResult result) {
  const Real& real = RealNvrtc();
  return real.lib != nullptr ? real.nvrtcGetErrorString(result)
                             : "NVRTC_ERROR (the real NVRTC is not found)";
}

#define JITCACHE_FORWARD(name, params, args)                                   \
  nvrtcResult name params {                                                    \
    const Real& real = RealNvrtc();                                            \
    return real.name != nullptr ? real.name args : NVRTC_ERROR_INTERNAL_ERROR; \
  }
JITCACHE_FORWARD(nvrtcVersion, (int* major, int* minor), (major, minor))
JITCACHE_FORWARD(nvrtcGetNumSupportedArchs, (int* n), (n))
JITCACHE_FORWARD(nvrtcGetSupportedArchs, (int* archs), (archs))
JITCACHE_FORWARD(nvrtcGetPCHHeapSize, (size_t * size), (size))
JITCACHE_FORWARD(nvrtcSetPCHHeapSize, (size_t size), (size))
#undef JITCACHE_FORWARD

nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src,
                               const char* name, int num_headers,
                               const char* const* headers,
                               const char* const* include_names) {
  if (prog == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (src == nullptr || num_headers < 0 ||
      (num_headers > 0 && (headers == nullptr || include_names == nullptr))) {
    return NVRTC_ERROR_INVALID_INPUT;
  }
  auto shim = std::make_unique<Shim>();
  shim->source = src;
  // NVRTC names a program without a name (NULL or "") default_program.
  shim->name = name != nullptr && *name != '\0' ? name : "default_program";
  for (int i = 0; i < num_headers; ++i) {
    if (headers[i] == nullptr || include_names[i] == nullptr) {
      return NVRTC_ERROR_INVALID_INPUT;
    }
    for (const auto& [n, unused] : shim->headers) {
      if (n == include_names[i]) return NVRTC_ERROR_INVALID_INPUT;
    }
    shim->headers.emplace_back(include_names[i], headers[i]);
  }
  *prog = reinterpret_cast<nvrtcProgram>(shim.release());
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  if (prog == nullptr || *prog == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  Shim* p = Of(*prog);
  if (p->real != nullptr) RealNvrtc().nvrtcDestroyProgram(&p->real);
  delete p;
  *prog = nullptr;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcAddNameExpression(nvrtcProgram prog, const char* expr) {
  if (prog == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (expr == nullptr || *expr == '\0') return NVRTC_ERROR_INVALID_INPUT;
  std::lock_guard<std::mutex> lock(Of(prog)->mu);
  if (Of(prog)->compiled || Of(prog)->real != nullptr) {
    return NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
  }
  Of(prog)->name_expressions.emplace_back(expr);
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int num_options,
                                const char* const* options) {
  if (prog == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (num_options < 0 || (num_options > 0 && options == nullptr)) {
    return NVRTC_ERROR_INVALID_INPUT;
  }
  Shim& p = *Of(prog);
  std::lock_guard<std::mutex> lock(p.mu);
  p.options.assign(options, options + num_options);
  // A new compile replaces every answer of the last one, as in NVRTC, the
  // real NVRTC's too when it compiled the last one.
  if (p.real != nullptr) RealNvrtc().nvrtcDestroyProgram(&p.real);
  p.compiled = false;
  p.failed = false;
  p.objects.clear();
  p.lowered.clear();
  const CodeType target = PrimaryTarget(p.options);
  if (AskDaemon(p, target)) {
    auto it = p.objects.find(target);
    return it != p.objects.end() && it->second.exists ? NVRTC_SUCCESS
                                                      : NVRTC_ERROR_COMPILATION;
  }
  return CompileWithReal(p);
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t* size) {
  return GetSize(prog, size, CodeType::kPtx, &Real::nvrtcGetPTXSize, true);
}
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char* out) {
  return Get(prog, out, CodeType::kPtx, &Real::nvrtcGetPTX, true);
}
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* size) {
  return GetSize(prog, size, CodeType::kCubin, &Real::nvrtcGetCUBINSize, false);
}
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* out) {
  return Get(prog, out, CodeType::kCubin, &Real::nvrtcGetCUBIN, false);
}
nvrtcResult nvrtcGetLTOIRSize(nvrtcProgram prog, size_t* size) {
  return GetSize(prog, size, CodeType::kLtoir, &Real::nvrtcGetLTOIRSize, false);
}
nvrtcResult nvrtcGetLTOIR(nvrtcProgram prog, char* out) {
  return Get(prog, out, CodeType::kLtoir, &Real::nvrtcGetLTOIR, false);
}
nvrtcResult nvrtcGetOptiXIRSize(nvrtcProgram prog, size_t* size) {
  return GetSize(prog, size, CodeType::kOptixIr, &Real::nvrtcGetOptiXIRSize,
                 false);
}
nvrtcResult nvrtcGetOptiXIR(nvrtcProgram prog, char* out) {
  return Get(prog, out, CodeType::kOptixIr, &Real::nvrtcGetOptiXIR, false);
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* size) {
  if (prog == nullptr || size == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  Shim& p = *Of(prog);
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.real != nullptr)
    return RealNvrtc().nvrtcGetProgramLogSize(p.real, size);
  *size = p.log.size() + 1;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* out) {
  if (prog == nullptr || out == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  Shim& p = *Of(prog);
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.real != nullptr) return RealNvrtc().nvrtcGetProgramLog(p.real, out);
  std::memcpy(out, p.log.c_str(), p.log.size() + 1);
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetLoweredName(nvrtcProgram prog, const char* expr,
                                const char** lowered) {
  if (prog == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (expr == nullptr || lowered == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  Shim& p = *Of(prog);
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.real != nullptr) {
    return RealNvrtc().nvrtcGetLoweredName(p.real, expr, lowered);
  }
  // A program that did not compile has no lowered names, as in NVRTC.
  if (!p.compiled || p.failed) {
    return NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION;
  }
  auto it = p.lowered.find(expr);
  if (it == p.lowered.end()) return NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID;
  *lowered = it->second.c_str();
  return NVRTC_SUCCESS;
}

// Precompiled headers: the daemon compiles no program that makes or uses
// one (those options stay with the real NVRTC, in the caller's process,
// whose PCH heap they live in). For a program the daemon compiled, or one
// not compiled yet, the real NVRTC answers "no PCH attempted" and a
// required heap of 0 bytes; so do these.
nvrtcResult nvrtcGetPCHCreateStatus(nvrtcProgram prog) {
  if (prog == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  Shim& p = *Of(prog);
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.real == nullptr) return NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED;
  const Real& real = RealNvrtc();
  if (real.nvrtcGetPCHCreateStatus == nullptr) {
    return NVRTC_ERROR_INTERNAL_ERROR;
  }
  return real.nvrtcGetPCHCreateStatus(p.real);
}

nvrtcResult nvrtcGetPCHHeapSizeRequired(nvrtcProgram prog, size_t* size) {
  if (prog == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  if (size == nullptr) return NVRTC_ERROR_INVALID_INPUT;
  Shim& p = *Of(prog);
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.real == nullptr) {
    *size = 0;
    return NVRTC_SUCCESS;
  }
  const Real& real = RealNvrtc();
  if (real.nvrtcGetPCHHeapSizeRequired == nullptr) {
    return NVRTC_ERROR_INTERNAL_ERROR;
  }
  return real.nvrtcGetPCHHeapSizeRequired(p.real, size);
}

// A flow callback cannot reach the daemon's compile: the daemon enforces
// its own limits. It is kept for a compile the real NVRTC runs.
nvrtcResult nvrtcSetFlowCallback(nvrtcProgram prog,
                                 int (*callback)(void*, void*), void* payload) {
  if (prog == nullptr) return NVRTC_ERROR_INVALID_PROGRAM;
  Shim& p = *Of(prog);
  std::lock_guard<std::mutex> lock(p.mu);
  p.flow_callback = callback;
  p.flow_payload = payload;
  if (p.real != nullptr && RealNvrtc().nvrtcSetFlowCallback != nullptr) {
    return RealNvrtc().nvrtcSetFlowCallback(p.real, callback, payload);
  }
  return NVRTC_SUCCESS;
}

}  // extern "C"
