#include "client/driver/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace jitcache::internal {
namespace {

struct Loaded {
  DriverApi api{};
  absl::Status status;
};

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult*);

template <typename Fn>
absl::Status Resolve(GetProcAddressFn get, const char* name, Fn* out) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult found{};
  // The driver hands out the version of each entry point that matches the
  // headers we were built with (e.g. cuMemAlloc_v2).
  if (get(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
          CUDA_SUCCESS ||
      fn == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver has no ", name,
                     " (driver older than CUDA ", CUDA_VERSION / 1000, "?)"));
  }
  *out = reinterpret_cast<Fn>(fn);
  return absl::OkStatus();
}

Loaded Load() {
  Loaded loaded;
  const char* override_name = std::getenv("JITCACHE_LIBCUDA");
  const char* name = override_name != nullptr ? override_name : "libcuda.so.1";
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    loaded.status = absl::FailedPreconditionError(
        absl::StrCat("cannot load the CUDA driver (", name, "): ", dlerror(),
                     "; loading and launching kernels needs an NVIDIA driver"));
    return loaded;
  }
  auto get =
      reinterpret_cast<GetProcAddressFn>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get == nullptr) {
    loaded.status = absl::FailedPreconditionError(
        "the CUDA driver has no cuGetProcAddress_v2 (older than CUDA 12)");
    return loaded;
  }
  DriverApi& a = loaded.api;
  absl::Status s;
  auto resolve = [&](const char* n, auto* out) {
    if (s.ok()) s = Resolve(get, n, out);
  };
  resolve("cuInit", &a.Init);
  resolve("cuGetErrorName", &a.GetErrorName);
  resolve("cuGetErrorString", &a.GetErrorString);
  resolve("cuDeviceGet", &a.DeviceGet);
  resolve("cuDeviceGetAttribute", &a.DeviceGetAttribute);
  resolve("cuDevicePrimaryCtxRetain", &a.PrimaryCtxRetain);
  resolve("cuCtxGetCurrent", &a.CtxGetCurrent);
  resolve("cuCtxSetCurrent", &a.CtxSetCurrent);
  resolve("cuLibraryLoadData", &a.LibraryLoadData);
  resolve("cuLibraryLoadFromFile", &a.LibraryLoadFromFile);
  resolve("cuLibraryUnload", &a.LibraryUnload);
  resolve("cuLibraryGetKernel", &a.LibraryGetKernel);
  resolve("cuKernelGetFunction", &a.KernelGetFunction);
  resolve("cuKernelGetAttribute", &a.KernelGetAttribute);
  resolve("cuLaunchKernel", &a.LaunchKernel);
  resolve("cuStreamCreate", &a.StreamCreate);
  resolve("cuStreamDestroy", &a.StreamDestroy);
  resolve("cuStreamQuery", &a.StreamQuery);
  resolve("cuStreamSynchronize", &a.StreamSynchronize);
  resolve("cuEventCreate", &a.EventCreate);
  resolve("cuEventDestroy", &a.EventDestroy);
  resolve("cuEventRecord", &a.EventRecord);
  resolve("cuEventQuery", &a.EventQuery);
  resolve("cuEventSynchronize", &a.EventSynchronize);
  resolve("cuMemAlloc", &a.MemAlloc);
  resolve("cuMemFree", &a.MemFree);
  resolve("cuMemcpyHtoD", &a.MemcpyHtoD);
  resolve("cuMemcpyDtoH", &a.MemcpyDtoH);
  if (!s.ok()) {
    loaded.status = s;
    return loaded;
  }
  if (CUresult r = a.Init(0); r != CUDA_SUCCESS) {
    loaded.status = absl::FailedPreconditionError(
        DriverError(a, r, "cuInit (is there a GPU?)").message());
  } else if (CUresult d = a.DeviceGet(&a.device, 0); d != CUDA_SUCCESS) {
    loaded.status = absl::FailedPreconditionError(
        DriverError(a, d, "cuDeviceGet(0)").message());
  }
  return loaded;
}

}  // namespace

absl::Status DriverError(const DriverApi& api, CUresult result,
                         absl::string_view what) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.GetErrorName != nullptr) api.GetErrorName(result, &name);
  if (api.GetErrorString != nullptr) api.GetErrorString(result, &text);
  const std::string message =
      absl::StrCat(what, ": ", name != nullptr ? name : "CUDA_ERROR", " (",
                   text != nullptr ? text : "unknown error", ")");
  switch (result) {
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return absl::InvalidArgumentError(message);
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<const DriverApi*> Driver() {
  static const Loaded* loaded = new Loaded(Load());
  if (!loaded->status.ok()) return loaded->status;
  const DriverApi& api = loaded->api;
  // Each thread needs a current context; the primary one of device 0 is what
  // the runtime API would use too.
  CUcontext current = nullptr;
  if (api.CtxGetCurrent(&current) == CUDA_SUCCESS && current == nullptr) {
    CUdevice device = 0;
    CUcontext primary = nullptr;
    if (CUresult r = api.DeviceGet(&device, 0); r != CUDA_SUCCESS) {
      return DriverError(api, r, "cuDeviceGet");
    }
    if (CUresult r = api.PrimaryCtxRetain(&primary, device);
        r != CUDA_SUCCESS) {
      return DriverError(api, r, "cuDevicePrimaryCtxRetain");
    }
    if (CUresult r = api.CtxSetCurrent(primary); r != CUDA_SUCCESS) {
      return DriverError(api, r, "cuCtxSetCurrent");
    }
  }
  return &api;
}

}  // namespace jitcache::internal
