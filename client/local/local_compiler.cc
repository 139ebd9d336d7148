#include "client/local/local_compiler.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/rpc/code_types.h"
#include "client/rpc/messages.h"
#include "common/compile_options.h"
#include "common/digest.h"
#include "common/nvrtc_program.h"
#include "common/paths.h"
#include "common/plain_status_absl.h"

namespace jitcache::internal {
namespace {

// NVRTC's entry points, resolved at run time: the client has no link
// dependency on NVRTC. The call sequence is the daemon's (RunNvrtc).
struct Loaded {
  NvrtcApi api;
  OptionPolicy policy;                    // supported archs
  std::vector<std::string> include_dirs;  // the toolkit's
  absl::Status status;
};

Loaded Load() {
  Loaded loaded;
  const std::string root = CudaHome();
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
  decltype(&nvrtcGetNumSupportedArchs) get_num_supported_archs = nullptr;
  decltype(&nvrtcGetSupportedArchs) get_supported_archs = nullptr;
  resolve("nvrtcGetErrorString", &a.GetErrorString);
  resolve("nvrtcGetNumSupportedArchs", &get_num_supported_archs);
  resolve("nvrtcGetSupportedArchs", &get_supported_archs);
  resolve("nvrtcCreateProgram", &a.CreateProgram);
  resolve("nvrtcDestroyProgram", &a.DestroyProgram);
  resolve("nvrtcCompileProgram", &a.CompileProgram);
  resolve("nvrtcGetPTXSize", &a.GetPTXSize);
  resolve("nvrtcGetPTX", &a.GetPTX);
  resolve("nvrtcGetCUBINSize", &a.GetCUBINSize);
  resolve("nvrtcGetCUBIN", &a.GetCUBIN);
  resolve("nvrtcGetLTOIRSize", &a.GetLTOIRSize);
  resolve("nvrtcGetLTOIR", &a.GetLTOIR);
  resolve("nvrtcGetOptiXIRSize", &a.GetOptiXIRSize);
  resolve("nvrtcGetOptiXIR", &a.GetOptiXIR);
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
  if (get_num_supported_archs(&n) == NVRTC_SUCCESS && n > 0) {
    loaded.policy.supported_archs.resize(n);
    get_supported_archs(loaded.policy.supported_archs.data());
  }
  // The daemon puts the canonical include/ and include/cccl after the
  // options; so must we, for the same bytes.
  std::error_code ec;
  const std::filesystem::path include = std::filesystem::path(root) / "include";
  loaded.include_dirs.push_back(
      std::filesystem::canonical(include, ec).string());
  if (std::filesystem::exists(include / "cccl")) {
    loaded.include_dirs.push_back(
        std::filesystem::canonical(include / "cccl", ec).string());
  }
  return loaded;
}

}  // namespace

absl::StatusOr<ObjectCode> CompileLocally(const Program& program,
                                          const ProgramOptions& options,
                                          CodeType target) {
  static const Loaded* loaded = new Loaded(Load());
  if (!loaded->status.ok()) return loaded->status;
  if (target != CodeType::kPtx && target != CodeType::kCubin &&
      target != CodeType::kLtoir && target != CodeType::kOptixIr) {
    return absl::InvalidArgumentError(
        "NVRTC compiles to ptx, cubin, ltoir or optixir");
  }
  const std::vector<std::string> raw = NvrtcOptionsFor(options, target);
  absl::StatusOr<CanonicalOptions> canonical = ToAbsl(
      CanonicalizeCompileOptions(raw, ToObjectKind(target), loaded->policy),
      absl::StatusCode::kInvalidArgument);
  if (!canonical.ok()) return canonical.status();
  std::vector<std::string> names = options.name_expressions;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());

  const absl::Time start = absl::Now();
  NvrtcInput input;
  input.program_name = program.name().empty() ? "program.cu" : program.name();
  input.source = &program.source();
  input.headers = &program.headers();
  input.options = canonical->options;
  if (options.toolkit_include_dirs) input.include_dirs = loaded->include_dirs;
  input.name_expressions = std::move(names);
  input.target = ToObjectKind(target);
  absl::StatusOr<NvrtcOutput> out = RunNvrtc(loaded->api, input);
  if (!out.ok()) return out.status();

  ObjectCode code;
  code.code_type = target;
  code.name = input.program_name;
  code.served = Served::kLocal;
  code.log = std::move(out->log);
  code.compiled = out->compiled == NVRTC_SUCCESS;
  if (code.compiled) {
    code.bytes = std::move(out->object);
    for (auto& [expr, lowered] : out->lowered_names) {
      code.symbol_mapping[expr] = std::move(lowered);
    }
    code.object_digest = Digest::Of(code.bytes).Hex();
  }
  code.compile_time_us = absl::ToInt64Microseconds(absl::Now() - start);
  return code;
}

}  // namespace jitcache::internal
