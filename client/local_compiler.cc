#include "client/local_compiler.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/compile_options.h"
#include "common/digest.h"

namespace jitcache::internal {
namespace {

// NVRTC's entry points, resolved at run time: the client has no link
// dependency on NVRTC.
struct NvrtcApi {
  decltype(&nvrtcGetErrorString) GetErrorString;
  decltype(&nvrtcGetNumSupportedArchs) GetNumSupportedArchs;
  decltype(&nvrtcGetSupportedArchs) GetSupportedArchs;
  decltype(&nvrtcCreateProgram) CreateProgram;
  decltype(&nvrtcDestroyProgram) DestroyProgram;
  decltype(&nvrtcCompileProgram) CompileProgram;
  decltype(&nvrtcGetPTXSize) GetPTXSize;
  decltype(&nvrtcGetPTX) GetPTX;
  decltype(&nvrtcGetCUBINSize) GetCUBINSize;
  decltype(&nvrtcGetCUBIN) GetCUBIN;
  decltype(&nvrtcGetLTOIRSize) GetLTOIRSize;
  decltype(&nvrtcGetLTOIR) GetLTOIR;
  decltype(&nvrtcGetProgramLogSize) GetProgramLogSize;
  decltype(&nvrtcGetProgramLog) GetProgramLog;
  decltype(&nvrtcAddNameExpression) AddNameExpression;
  decltype(&nvrtcGetLoweredName) GetLoweredName;
  OptionPolicy policy;  // supported archs and the toolkit's include dirs
};

struct Loaded {
  NvrtcApi api{};
  absl::Status status;
};

std::string CudaRoot() {
  const char* home = std::getenv("CUDA_HOME");
  return home != nullptr && *home != '\0' ? home : "/usr/local/cuda";
}

Loaded Load() {
  Loaded loaded;
  const std::string root = CudaRoot();
  void* lib = nullptr;
  std::string tried;
  std::vector<std::string> names;
  if (const char* n = std::getenv("JITCACHE_LIBNVRTC")) {
    names.push_back(n);
  } else {
    names = {"libnvrtc.so.13", root + "/lib64/libnvrtc.so.13",
             root + "/lib64/libnvrtc.so"};
  }
  for (const std::string& name : names) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    absl::StrAppend(&tried, tried.empty() ? "" : "; ", dlerror());
  }
  if (lib == nullptr) {
    loaded.status = absl::UnavailableError(absl::StrCat(
        "jitcached is unreachable and NVRTC cannot be loaded for a local "
        "compile: ",
        tried));
    return loaded;
  }
  NvrtcApi& a = loaded.api;
  bool ok = true;
  auto resolve = [&](const char* name, auto* out) {
    void* fn = dlsym(lib, name);
    if (fn == nullptr) ok = false;
    *out = reinterpret_cast<std::remove_reference_t<decltype(*out)>>(fn);
  };
  resolve("nvrtcGetErrorString", &a.GetErrorString);
  resolve("nvrtcGetNumSupportedArchs", &a.GetNumSupportedArchs);
  resolve("nvrtcGetSupportedArchs", &a.GetSupportedArchs);
  resolve("nvrtcCreateProgram", &a.CreateProgram);
  resolve("nvrtcDestroyProgram", &a.DestroyProgram);
  resolve("nvrtcCompileProgram", &a.CompileProgram);
  resolve("nvrtcGetPTXSize", &a.GetPTXSize);
  resolve("nvrtcGetPTX", &a.GetPTX);
  resolve("nvrtcGetCUBINSize", &a.GetCUBINSize);
  resolve("nvrtcGetCUBIN", &a.GetCUBIN);
  resolve("nvrtcGetLTOIRSize", &a.GetLTOIRSize);
  resolve("nvrtcGetLTOIR", &a.GetLTOIR);
  resolve("nvrtcGetProgramLogSize", &a.GetProgramLogSize);
  resolve("nvrtcGetProgramLog", &a.GetProgramLog);
  resolve("nvrtcAddNameExpression", &a.AddNameExpression);
  resolve("nvrtcGetLoweredName", &a.GetLoweredName);
  if (!ok) {
    loaded.status = absl::UnavailableError(
        "the NVRTC found for a local compile lacks an entry point");
    return loaded;
  }
  int n = 0;
  if (a.GetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
    a.policy.supported_archs.resize(n);
    a.GetSupportedArchs(a.policy.supported_archs.data());
  }
  // The daemon puts the canonical include/ and include/cccl after the
  // options; so must we, for the same bytes.
  std::error_code ec;
  const std::filesystem::path include = std::filesystem::path(root) / "include";
  a.policy.allowed_include_dirs.push_back(
      std::filesystem::canonical(include, ec).string());
  if (std::filesystem::exists(include / "cccl")) {
    a.policy.allowed_include_dirs.push_back(
        std::filesystem::canonical(include / "cccl", ec).string());
  }
  return loaded;
}

class ProgramHandle {
 public:
  explicit ProgramHandle(const NvrtcApi& api) : api_(api) {}
  ProgramHandle(const ProgramHandle&) = delete;
  ProgramHandle& operator=(const ProgramHandle&) = delete;
  ~ProgramHandle() {
    if (prog_ != nullptr) api_.DestroyProgram(&prog_);
  }
  nvrtcProgram* out() { return &prog_; }
  nvrtcProgram get() const { return prog_; }

 private:
  const NvrtcApi& api_;
  nvrtcProgram prog_ = nullptr;
};

ObjectKind KindOf(CodeType type) {
  switch (type) {
    case CodeType::kCubin:
      return ObjectKind::kCubin;
    case CodeType::kLtoir:
      return ObjectKind::kLtoir;
    default:
      return ObjectKind::kPtx;
  }
}

}  // namespace

absl::StatusOr<ObjectCode> CompileLocally(const Program& program,
                                          const ProgramOptions& options,
                                          CodeType target) {
  static const Loaded* loaded = new Loaded(Load());
  if (!loaded->status.ok()) return loaded->status;
  const NvrtcApi& api = loaded->api;
  if (target != CodeType::kPtx && target != CodeType::kCubin &&
      target != CodeType::kLtoir) {
    return absl::InvalidArgumentError("NVRTC compiles to ptx, cubin or ltoir");
  }
  if (program.source().empty()) {
    return absl::InvalidArgumentError("source is empty");
  }
  const std::vector<std::string> raw = options.AsNvrtcOptions();
  absl::StatusOr<CanonicalOptions> canonical =
      CanonicalizeCompileOptions(raw, KindOf(target), api.policy);
  if (!canonical.ok()) return canonical.status();
  std::vector<std::string> names = options.name_expressions;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());

  const absl::Time start = absl::Now();
  const std::string name =
      program.name().empty() ? "program.cu" : program.name();
  std::vector<const char*> header_names, header_bodies;
  for (const auto& [n, body] : program.headers()) {
    header_names.push_back(n.c_str());
    header_bodies.push_back(body.c_str());
  }
  ProgramHandle prog(api);
  auto fail = [&](nvrtcResult r, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", api.GetErrorString(r)));
  };
  if (nvrtcResult r =
          api.CreateProgram(prog.out(), program.source().c_str(), name.c_str(),
                            static_cast<int>(header_names.size()),
                            header_bodies.data(), header_names.data());
      r != NVRTC_SUCCESS) {
    return fail(r, "nvrtcCreateProgram");
  }
  for (const std::string& expr : names) {
    if (nvrtcResult r = api.AddNameExpression(prog.get(), expr.c_str());
        r != NVRTC_SUCCESS) {
      return fail(r, absl::StrCat("name expression '", expr, "'"));
    }
  }
  std::vector<std::string> args = canonical->options;
  for (const std::string& dir : api.policy.allowed_include_dirs) {
    args.push_back(absl::StrCat("--include-path=", dir));
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  const nvrtcResult compiled = api.CompileProgram(
      prog.get(), static_cast<int>(argv.size()), argv.data());

  ObjectCode code;
  code.code_type = target;
  code.name = name;
  code.served = Served::kLocal;
  size_t log_size = 0;
  if (api.GetProgramLogSize(prog.get(), &log_size) == NVRTC_SUCCESS &&
      log_size > 1) {
    code.log.resize(log_size);
    api.GetProgramLog(prog.get(), code.log.data());
    while (!code.log.empty() && code.log.back() == '\0') code.log.pop_back();
  }
  if (compiled == NVRTC_ERROR_COMPILATION) {
    code.compiled = false;
  } else if (compiled != NVRTC_SUCCESS) {
    return fail(compiled, "nvrtcCompileProgram");
  } else {
    size_t size = 0;
    nvrtcResult r = NVRTC_SUCCESS;
    if (target == CodeType::kPtx) {
      r = api.GetPTXSize(prog.get(), &size);
      code.bytes.resize(size);
      if (r == NVRTC_SUCCESS) r = api.GetPTX(prog.get(), code.bytes.data());
      while (!code.bytes.empty() && code.bytes.back() == '\0') {
        code.bytes.pop_back();
      }
    } else if (target == CodeType::kCubin) {
      r = api.GetCUBINSize(prog.get(), &size);
      code.bytes.resize(size);
      if (r == NVRTC_SUCCESS) r = api.GetCUBIN(prog.get(), code.bytes.data());
    } else {
      r = api.GetLTOIRSize(prog.get(), &size);
      code.bytes.resize(size);
      if (r == NVRTC_SUCCESS) r = api.GetLTOIR(prog.get(), code.bytes.data());
    }
    if (r != NVRTC_SUCCESS) return fail(r, "reading NVRTC output");
    for (const std::string& expr : names) {
      const char* lowered = nullptr;
      if (nvrtcResult lr =
              api.GetLoweredName(prog.get(), expr.c_str(), &lowered);
          lr != NVRTC_SUCCESS) {
        return fail(lr, absl::StrCat("name expression '", expr, "'"));
      }
      code.symbol_mapping[expr] = lowered;
    }
    code.compiled = true;
    code.object_digest = Digest::Of(code.bytes).Hex();
  }
  code.compile_time_us = absl::ToInt64Microseconds(absl::Now() - start);
  return code;
}

}  // namespace jitcache::internal
