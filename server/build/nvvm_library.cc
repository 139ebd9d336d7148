#include "server/build/nvvm_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>

#include "absl/strings/str_cat.h"
#include "server/build/ptxas_registry.h"

namespace jitcache {

// libNVVM's C API (nvvm.h), spelled here: the build has no nvvm.h.
#define JITCACHE_NVVM_FUNCTIONS(X)                                            \
  X(nvvmVersion, int, int*, int*)                                             \
  X(nvvmIRVersion, int, int*, int*, int*, int*)                               \
  X(nvvmCreateProgram, int, void**)                                           \
  X(nvvmDestroyProgram, int, void**)                                          \
  X(nvvmAddModuleToProgram, int, void*, const char*, size_t, const char*)     \
  X(nvvmLazyAddModuleToProgram, int, void*, const char*, size_t, const char*) \
  X(nvvmCompileProgram, int, void*, int, const char**)                        \
  X(nvvmVerifyProgram, int, void*, int, const char**)                         \
  X(nvvmGetCompiledResultSize, int, void*, size_t*)                           \
  X(nvvmGetCompiledResult, int, void*, char*)                                 \
  X(nvvmGetProgramLogSize, int, void*, size_t*)                               \
  X(nvvmGetProgramLog, int, void*, char*)

struct NvvmLibrary::Api {
#define JITCACHE_NVVM_MEMBER(name, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  JITCACHE_NVVM_FUNCTIONS(JITCACHE_NVVM_MEMBER)
#undef JITCACHE_NVVM_MEMBER
};

namespace {

constexpr int kSuccess = 0;
constexpr int kOutOfMemory = 1;  // NVVM_ERROR_OUT_OF_MEMORY

// libNVVM out of memory (the worker's address space is capped): not an
// answer to keep, as NVRTC's and ptxas's are not.
absl::Status OutOfMemory(size_t call) {
  return absl::ResourceExhaustedError(
      absl::StrCat("libNVVM ran out of memory at call ", call));
}

// A program, destroyed with its scope.
class Program {
 public:
  explicit Program(const NvvmLibrary::Api& api) : api_(api) {
    created_ = api_.nvvmCreateProgram(&program_);
  }
  ~Program() {
    if (program_ != nullptr) api_.nvvmDestroyProgram(&program_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  int created() const { return created_; }
  void* get() const { return program_; }

 private:
  const NvvmLibrary::Api& api_;
  void* program_ = nullptr;
  int created_ = kSuccess;
};

// A size and then the buffer of that size, as a caller reads them: the
// size call's result, and the read's (its bytes into *bytes).
void ReadBuffer(void* program, int (*size_of)(void*, size_t*),
                int (*read)(void*, char*), int* size_result, int* read_result,
                std::string* bytes) {
  size_t size = 0;
  *size_result = size_of(program, &size);
  if (*size_result != kSuccess) return;
  // A size of 0 is read into a byte of room, and read as nothing.
  std::string buffer(size == 0 ? 1 : size, '\0');
  *read_result = read(program, buffer.data());
  buffer.resize(size);
  *bytes = std::move(buffer);
}

bool IsModule(const v1::NvvmCall& call) {
  return call.kind() == v1::NVVM_ADD_MODULE ||
         call.kind() == v1::NVVM_LAZY_ADD_MODULE;
}

}  // namespace

NvvmLibrary::NvvmLibrary(void* handle, std::unique_ptr<Api> api)
    : handle_(handle), api_(std::move(api)) {}

NvvmLibrary::~NvvmLibrary() { dlclose(handle_); }

absl::StatusOr<std::unique_ptr<NvvmLibrary>> NvvmLibrary::Open(
    const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "libNVVM ", path, " cannot be loaded: ", why != nullptr ? why : "?"));
  }
  auto api = std::make_unique<Api>();
  const char* missing = nullptr;
#define JITCACHE_NVVM_RESOLVE(name, ...)                                   \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name)); \
  if (api->name == nullptr && missing == nullptr) missing = #name;
  JITCACHE_NVVM_FUNCTIONS(JITCACHE_NVVM_RESOLVE)
#undef JITCACHE_NVVM_RESOLVE
  if (missing != nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat("libNVVM ", path, " has no ", missing));
  }
  return std::unique_ptr<NvvmLibrary>(new NvvmLibrary(handle, std::move(api)));
}

absl::Status NvvmLibrary::DescribeInto(ToolchainInfo::Library* lib) const {
  int major = 0, minor = 0, ir_major = 0, ir_minor = 0, debug_major = 0,
      debug_minor = 0;
  if (api_->nvvmVersion(&major, &minor) != kSuccess ||
      api_->nvvmIRVersion(&ir_major, &ir_minor, &debug_major, &debug_minor) !=
          kSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat("libNVVM ", lib->path, " does not say its version"));
  }
  lib->major = static_cast<unsigned>(major);
  lib->minor = static_cast<unsigned>(minor);
  lib->ir_major = static_cast<unsigned>(ir_major);
  lib->ir_minor = static_cast<unsigned>(ir_minor);
  lib->debug_major = static_cast<unsigned>(debug_major);
  lib->debug_minor = static_cast<unsigned>(debug_minor);
  return absl::OkStatus();
}

absl::StatusOr<ActionResult> NvvmLibrary::Run(
    const std::vector<v1::NvvmCall>& calls) const {
  if (calls.empty() || IsModule(calls.back()) ||
      calls.back().kind() == v1::NVVM_CALL_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        "a libNVVM program's calls end with a compile or a verify");
  }
  const absl::Time start = absl::Now();
  Program program(*api_);
  if (program.created() != kSuccess || program.get() == nullptr) {
    return absl::InternalError(
        absl::StrCat("nvvmCreateProgram failed: ", program.created()));
  }
  v1::NvvmRun run;
  for (size_t i = 0; i < calls.size(); ++i) {
    const v1::NvvmCall& call = calls[i];
    int result = kSuccess;
    if (IsModule(call)) {
      const char* name = call.unnamed() ? nullptr : call.name().c_str();
      auto add = call.kind() == v1::NVVM_ADD_MODULE
                     ? api_->nvvmAddModuleToProgram
                     : api_->nvvmLazyAddModuleToProgram;
      result =
          add(program.get(), call.module().data(), call.module().size(), name);
      if (result == kOutOfMemory) return OutOfMemory(i);
      if (result != kSuccess) {
        return absl::FailedPreconditionError(
            absl::StrCat("libNVVM refused module ", i, " (", result,
                         "), which libnvvm.so.4 answers as taken"));
      }
      continue;
    }
    std::vector<const char*> options;
    for (const std::string& option : call.options()) {
      options.push_back(option.c_str());
    }
    auto run_call = call.kind() == v1::NVVM_COMPILE ? api_->nvvmCompileProgram
                                                    : api_->nvvmVerifyProgram;
    result = run_call(program.get(), static_cast<int>(options.size()),
                      options.empty() ? nullptr : options.data());
    if (result == kOutOfMemory) return OutOfMemory(i);
    if (i + 1 == calls.size()) run.set_result(result);
  }
  ActionResult out;
  int size_result = 0, read_result = 0;
  std::string log;
  ReadBuffer(program.get(), api_->nvvmGetProgramLogSize,
             api_->nvvmGetProgramLog, &size_result, &read_result, &log);
  if (size_result == kOutOfMemory || read_result == kOutOfMemory) {
    return OutOfMemory(calls.size());
  }
  run.set_log_size_result(size_result);
  run.set_log_result(read_result);
  out.log = log.substr(0, log.find('\0'));
  run.set_log(std::move(log));
  ReadBuffer(program.get(), api_->nvvmGetCompiledResultSize,
             api_->nvvmGetCompiledResult, &size_result, &read_result,
             &out.object);
  if (size_result == kOutOfMemory || read_result == kOutOfMemory) {
    return OutOfMemory(calls.size());
  }
  run.set_output_size_result(size_result);
  run.set_output_result(read_result);
  out.ok = run.result() == kSuccess;
  if (!out.ok) {
    run.set_failed_output(std::move(out.object));
    out.object.clear();
  }
  out.elapsed = absl::Now() - start;
  out.nvvm_run = std::move(run);
  return out;
}

absl::StatusOr<ToolchainInfo::Library> RegisterNvvm(const std::string& path) {
  absl::StatusOr<ToolchainInfo::Library> lib =
      HashToolkitFile(path, "--libnvvm", /*executable=*/false);
  if (!lib.ok()) return lib.status();
  lib->name = "libnvvm.so.4";
  absl::StatusOr<std::unique_ptr<NvvmLibrary>> nvvm =
      NvvmLibrary::Open(lib->path);
  if (!nvvm.ok()) return nvvm.status();
  if (absl::Status s = (*nvvm)->DescribeInto(&*lib); !s.ok()) return s;
  return lib;
}

std::string ToolkitLibNvvm(const std::string& cuda_root) {
  const std::string path = cuda_root + "/nvvm/lib64/libnvvm.so.4";
  return access(path.c_str(), R_OK) == 0 ? path : "";
}

}  // namespace jitcache
