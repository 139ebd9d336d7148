#ifndef JITCACHE_CLIENT_DRIVER_CUDA_DRIVER_H_
#define JITCACHE_CLIENT_DRIVER_CUDA_DRIVER_H_

#include <cuda.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jitcache::internal {

// The driver entry points the client uses, resolved at run time through
// cuGetProcAddress at the headers' CUDA version. Only names whose cuda.h
// prototype is their newest ABI may appear here: cuCtxGetDevice, say, comes
// back as cuCtxGetDevice_v2 (two arguments) at CUDA 13. libcuda is
// opened (dlopen) the first time anything is loaded, so a program that only
// compiles runs on machines without a driver. Immutable once loaded.
struct DriverApi {
  decltype(&cuInit) Init;
  decltype(&cuGetErrorName) GetErrorName;
  decltype(&cuGetErrorString) GetErrorString;
  decltype(&cuDeviceGet) DeviceGet;
  decltype(&cuDeviceGetAttribute) DeviceGetAttribute;
  decltype(&cuDevicePrimaryCtxRetain) PrimaryCtxRetain;
  decltype(&cuCtxGetCurrent) CtxGetCurrent;
  decltype(&cuCtxSetCurrent) CtxSetCurrent;
  decltype(&cuLibraryLoadData) LibraryLoadData;
  decltype(&cuLibraryLoadFromFile) LibraryLoadFromFile;
  decltype(&cuLibraryUnload) LibraryUnload;
  decltype(&cuLibraryGetKernel) LibraryGetKernel;
  decltype(&cuKernelGetFunction) KernelGetFunction;
  decltype(&cuKernelGetAttribute) KernelGetAttribute;
  decltype(&cuLaunchKernel) LaunchKernel;
  decltype(&cuStreamCreate) StreamCreate;
  decltype(&cuStreamDestroy) StreamDestroy;
  decltype(&cuStreamQuery) StreamQuery;
  decltype(&cuStreamSynchronize) StreamSynchronize;
  decltype(&cuEventCreate) EventCreate;
  decltype(&cuEventDestroy) EventDestroy;
  decltype(&cuEventRecord) EventRecord;
  decltype(&cuEventQuery) EventQuery;
  decltype(&cuEventSynchronize) EventSynchronize;
  decltype(&cuMemAlloc) MemAlloc;
  decltype(&cuMemFree) MemFree;
  decltype(&cuMemcpyHtoD) MemcpyHtoD;
  decltype(&cuMemcpyDtoH) MemcpyDtoH;

  CUdevice device = 0;  // device 0: its primary context is the one we use
};

// Loads libcuda.so.1 ($JITCACHE_LIBCUDA overrides the name) once per
// process, calls cuInit and makes device 0's primary context current on the
// calling thread when it has none. FAILED_PRECONDITION, saying what is
// missing, when there is no usable driver. Thread-safe.
absl::StatusOr<const DriverApi*> Driver();

// A CUresult as a Status carrying the driver's error name and text.
absl::Status DriverError(const DriverApi& api, CUresult result,
                         absl::string_view what);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_DRIVER_CUDA_DRIVER_H_
