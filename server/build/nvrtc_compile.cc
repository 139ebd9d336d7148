#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "common/file_stamp.h"
#include "common/log.h"
#include "common/nvrtc_program.h"
#include "common/paths.h"
#include "common/sha256.h"
#include "server/build/cuda_compiler.h"
#include "server/build/nvvm_library.h"
#include "server/build/ptxas_registry.h"

namespace jitcache {
namespace {

// The NVRTC this binary links, as the table RunNvrtc drives.
const NvrtcApi& LinkedNvrtc() {
  static const NvrtcApi api = [] {
    NvrtcApi a;
    a.GetErrorString = &nvrtcGetErrorString;
    a.CreateProgram = &nvrtcCreateProgram;
    a.DestroyProgram = &nvrtcDestroyProgram;
    a.CompileProgram = &nvrtcCompileProgram;
    a.GetPTXSize = &nvrtcGetPTXSize;
    a.GetPTX = &nvrtcGetPTX;
    a.GetCUBINSize = &nvrtcGetCUBINSize;
    a.GetCUBIN = &nvrtcGetCUBIN;
    a.GetLTOIRSize = &nvrtcGetLTOIRSize;
    a.GetLTOIR = &nvrtcGetLTOIR;
    a.GetOptiXIRSize = &nvrtcGetOptiXIRSize;
    a.GetOptiXIR = &nvrtcGetOptiXIR;
    a.GetProgramLogSize = &nvrtcGetProgramLogSize;
    a.GetProgramLog = &nvrtcGetProgramLog;
    a.AddNameExpression = &nvrtcAddNameExpression;
    a.GetLoweredName = &nvrtcGetLoweredName;
    a.SetFlowCallback = &nvrtcSetFlowCallback;
    return a;
  }();
  return api;
}

absl::Status FromNvrtc(nvrtcResult r, absl::string_view what) {
  return jitcache::FromNvrtc(LinkedNvrtc(), r, what);
}

// NVRTC compiles name expressions as a pseudo-file "__nv_name_map"; when every
// error is there, the program is fine and the request named something that
// does not exist: a bad request, not a result to cache.
bool OnlyNameExpressionErrors(absl::string_view log) {
  bool any = false;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    const size_t at = line.find(": error");
    if (at == absl::string_view::npos) continue;
    if (!absl::StartsWith(line, "__nv_name_map")) return false;
    any = true;
  }
  return any;
}

// Hashes every file below `dir` by relative path and content, in path order.
absl::Status HashTree(const std::filesystem::path& dir, Sha256& hasher) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::follow_directory_symlink,
           ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path());
  }
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", dir.string(), ": ", ec.message()));
  }
  std::sort(files.begin(), files.end());
  std::string content;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    content.assign(std::istreambuf_iterator<char>(in), {});
    const std::string rel = file.lexically_relative(dir).string();
    hasher.Update(absl::StrCat(rel.size(), ":", rel, content.size(), ":"));
    hasher.Update(content);
  }
  return absl::OkStatus();
}

// What NVRTC's flow callback looks at; it must keep answering 1 once it has.
struct FlowControl {
  absl::Time deadline;
  const std::atomic<bool>* cancelled;
  std::atomic<bool> stopped{false};
};

int FlowCallback(void* payload, void* /*reserved*/) {
  auto* flow = static_cast<FlowControl*>(payload);
  if (flow->stopped.load(std::memory_order_relaxed)) return 1;
  if (absl::Now() > flow->deadline ||
      (flow->cancelled != nullptr &&
       flow->cancelled->load(std::memory_order_relaxed))) {
    flow->stopped.store(true, std::memory_order_relaxed);
    return 1;
  }
  return 0;
}

constexpr char kProbeSource[] = R"(
template <typename T>
__global__ void jitcache_probe(T* out, const T* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * T(3) + T(1);
}
template __global__ void jitcache_probe<float>(float*, const float*, int);
)";

// The file `symbol` was loaded from, resolved, and its stamp.
std::optional<ToolchainInfo::Library> LoadedLibrary(const char* name,
                                                    void* symbol) {
  Dl_info where;
  if (dladdr(symbol, &where) == 0 || where.dli_fname == nullptr) {
    return std::nullopt;
  }
  std::error_code ec;
  const std::filesystem::path resolved =
      std::filesystem::canonical(where.dli_fname, ec);
  struct stat st;
  if (ec || stat(resolved.c_str(), &st) != 0) return std::nullopt;
  ToolchainInfo::Library lib;
  lib.name = name;
  lib.path = resolved.string();
  lib.stamp = StampOf(st);
  return lib;
}

}  // namespace

std::string DefaultCudaRoot() { return CudaHome(); }

namespace {

// The ptxas binaries and the libNVVM the daemon runs.
absl::Status RegisterTools(const std::string& cuda_root,
                           const std::vector<std::string>& ptxas,
                           const std::string& libnvvm, ToolchainInfo& info) {
  absl::StatusOr<std::vector<ToolchainInfo::Library>> registered =
      RegisterPtxas(cuda_root, ptxas);
  if (!registered.ok()) return registered.status();
  info.ptxas = *std::move(registered);
  const std::string nvvm_path =
      libnvvm.empty() ? ToolkitLibNvvm(cuda_root) : libnvvm;
  if (nvvm_path.empty() || nvvm_path == "none") return absl::OkStatus();
  absl::StatusOr<ToolchainInfo::Library> nvvm = RegisterNvvm(nvvm_path);
  if (nvvm.ok()) {
    info.libnvvm = *std::move(nvvm);
  } else if (!libnvvm.empty()) {
    return nvvm.status();  // the one an administrator named
  } else {
    // The toolkit's, by default: a daemon without libNVVM still serves.
    JITCACHE_LOG(Warning) << nvvm.status() << "; no libNVVM (--libnvvm)";
  }
  return absl::OkStatus();
}

// NVRTC's and nvJitLink's versions, files and architectures; `versions`
// says the versions for the fingerprint.
absl::Status DescribeLoadedLibraries(ToolchainInfo& info,
                                     std::string* versions) {
  int major = 0, minor = 0;
  if (absl::Status s = FromNvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion");
      !s.ok()) {
    return s;
  }
  unsigned link_major = 0, link_minor = 0;
  if (nvJitLinkVersion(&link_major, &link_minor) != NVJITLINK_SUCCESS) {
    return absl::FailedPreconditionError("nvJitLinkVersion failed");
  }
  info.description = absl::StrCat("NVRTC ", major, ".", minor, ", nvJitLink ",
                                  link_major, ".", link_minor);
  *versions = absl::StrCat("nvrtc ", major, ".", minor, ";nvjitlink ",
                           link_major, ".", link_minor, ";");
  if (std::optional<ToolchainInfo::Library> lib = LoadedLibrary(
          "libnvrtc.so.13", reinterpret_cast<void*>(&nvrtcVersion))) {
    lib->major = static_cast<unsigned>(major);
    lib->minor = static_cast<unsigned>(minor);
    info.libraries.push_back(*std::move(lib));
  }
  if (std::optional<ToolchainInfo::Library> lib = LoadedLibrary(
          "libnvJitLink.so.13", reinterpret_cast<void*>(&nvJitLinkVersion))) {
    lib->major = link_major;
    lib->minor = link_minor;
    info.libraries.push_back(*std::move(lib));
  }
  int num_archs = 0;
  if (absl::Status s = FromNvrtc(nvrtcGetNumSupportedArchs(&num_archs),
                                 "nvrtcGetNumSupportedArchs");
      !s.ok()) {
    return s;
  }
  info.supported_archs.resize(num_archs);
  return FromNvrtc(nvrtcGetSupportedArchs(info.supported_archs.data()),
                   "nvrtcGetSupportedArchs");
}

// The toolkit's include directory (and its cccl/), resolved.
absl::Status FindIncludeDirs(const std::string& cuda_root,
                             ToolchainInfo& info) {
  const std::filesystem::path root =
      std::filesystem::path(cuda_root).lexically_normal();
  const std::filesystem::path include = root / "include";
  if (!std::filesystem::exists(include / "cuda_runtime.h")) {
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA toolkit headers in ", include.string(),
                     " (set --cuda-root or CUDA_HOME)"));
  }
  std::error_code ec;
  info.include_dirs.push_back(std::filesystem::canonical(include, ec).string());
  if (std::filesystem::exists(include / "cccl")) {
    info.include_dirs.push_back(
        std::filesystem::canonical(include / "cccl", ec).string());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaCompiler>> CudaCompiler::Create(
    const std::string& cuda_root, const std::vector<std::string>& ptxas,
    const std::string& libnvvm) {
  ToolchainInfo info;
  info.root = cuda_root;
  std::string versions;
  if (absl::Status s = RegisterTools(cuda_root, ptxas, libnvvm, info);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = DescribeLoadedLibraries(info, &versions); !s.ok()) {
    return s;
  }
  if (absl::Status s = FindIncludeDirs(cuda_root, info); !s.ok()) return s;
  Sha256 fingerprint;
  fingerprint.Update(absl::StrCat(
      versions, "archs ", absl::StrJoin(info.supported_archs, ","), ";"));
  // include/cccl lies inside include/: one walk covers both.
  if (absl::Status s = HashTree(info.include_dirs[0], fingerprint); !s.ok()) {
    return s;
  }

  auto compiler = std::unique_ptr<CudaCompiler>(new CudaCompiler(info));
  // A probe compile: a patch-level change of NVRTC that changes its output
  // changes every key, even where the version numbers do not.
  CompileJob probe;
  probe.program_name = "jitcache_probe.cu";
  probe.source = kProbeSource;
  probe.target = ObjectKind::kPtx;
  absl::StatusOr<ActionResult> result = compiler->Compile(probe);
  if (!result.ok()) return result.status();
  if (!result->ok) {
    return absl::InternalError(
        absl::StrCat("the NVRTC probe compile failed: ", result->log));
  }
  fingerprint.Update(result->object);
  const Sha256::Digest digest = fingerprint.Finish();
  compiler->toolchain_.fingerprint.assign(
      reinterpret_cast<const char*>(digest.data()), digest.size());
  return compiler;
}

std::unique_ptr<CudaCompiler> CudaCompiler::ForWorker(
    std::vector<std::string> include_dirs) {
  // NVRTC opens its builtins library on the first compile, by name through
  // the loader's search: inside a compile view (compile_view.h) there is
  // no loader cache to find it by. Loaded now, the first compile finds it
  // loaded. Loading compiles nothing: the process stays clean.
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS) {
    const std::string builtins =
        absl::StrCat("libnvrtc-builtins.so.", major, ".", minor);
    dlopen(builtins.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  ToolchainInfo info;
  info.include_dirs = std::move(include_dirs);
  return std::unique_ptr<CudaCompiler>(new CudaCompiler(std::move(info)));
}

absl::StatusOr<ActionResult> CudaCompiler::Compile(const CompileJob& job) {
  const absl::Time start = absl::Now();
  FlowControl flow{job.deadline, job.cancelled};
  NvrtcInput input;
  input.program_name = job.program_name;
  input.source = &job.source;
  input.headers = &job.headers;
  input.options = job.options;
  if (job.toolkit_include_dirs) input.include_dirs = toolchain_.include_dirs;
  input.name_expressions = job.name_expressions;
  input.target = job.target;
  input.flow_callback = &FlowCallback;
  input.flow_payload = &flow;
  absl::StatusOr<NvrtcOutput> out = RunNvrtc(LinkedNvrtc(), input);
  if (!out.ok()) return out.status();
  ActionResult result;
  result.log = std::move(out->log);
  // NVRTC consults the flow callback only at points of its choosing, so a
  // compile can finish past its deadline. The limit is a promise to the
  // operator: such a result is refused all the same, and not stored.
  const bool late = absl::Now() > job.deadline;
  if (out->compiled == NVRTC_ERROR_CANCELLED || late) {
    if (job.cancelled != nullptr && job.cancelled->load()) {
      return absl::UnavailableError(
          "compile cancelled: the daemon is shutting down");
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "compile cancelled after ", absl::FormatDuration(absl::Now() - start),
        ": it ran past the daemon's compile-time limit"));
  }
  if (out->compiled == NVRTC_ERROR_COMPILATION) {
    if (!job.name_expressions.empty() && OnlyNameExpressionErrors(result.log)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a name expression does not name anything in the program:\n",
          result.log));
    }
    result.ok = false;
    result.elapsed = absl::Now() - start;
    return result;
  }
  result.object = std::move(out->object);
  result.lowered_names = std::move(out->lowered_names);
  result.ok = true;
  result.elapsed = absl::Now() - start;
  return result;
}

}  // namespace jitcache
