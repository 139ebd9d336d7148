#include "jitcache/library.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/driver/cuda_driver.h"

namespace jitcache {
namespace {

using internal::Driver;
using internal::DriverApi;
using internal::DriverError;

// Runs `call` with the driver, or returns why there is none.
template <typename F>
absl::Status WithDriver(F call) {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  return call(**api);
}

absl::Status Check(const DriverApi& api, CUresult r, absl::string_view what) {
  return r == CUDA_SUCCESS ? absl::OkStatus() : DriverError(api, r, what);
}

// cuStreamQuery / cuEventQuery: done, not yet, or an error.
absl::StatusOr<bool> Query(const DriverApi& api, CUresult r,
                           absl::string_view what) {
  if (r == CUDA_SUCCESS) return true;
  if (r == CUDA_ERROR_NOT_READY) return false;
  return DriverError(api, r, what);
}

}  // namespace

absl::StatusOr<Library> ObjectCode::Load() const {
  return Library::Load(*this);
}

absl::StatusOr<std::string> CurrentDeviceArch() {
  int major = 0, minor = 0;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    const CUdevice device = api.device;
    if (CUresult r = api.DeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
        r != CUDA_SUCCESS) {
      return DriverError(api, r, "cuDeviceGetAttribute");
    }
    return Check(
        api,
        api.DeviceGetAttribute(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute");
  });
  if (!status.ok()) return status;
  return absl::StrCat("sm_", major, minor);
}

// ---- Stream

absl::StatusOr<Stream> Stream::Create() {
  CUstream s = nullptr;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    return Check(api, api.StreamCreate(&s, CU_STREAM_NON_BLOCKING),
                 "cuStreamCreate");
  });
  if (!status.ok()) return status;
  return Stream(s);
}

Stream& Stream::operator=(Stream&& other) noexcept {
  std::swap(stream_, other.stream_);
  return *this;
}

Stream::~Stream() {
  if (stream_ == nullptr) return;
  if (auto api = Driver(); api.ok()) (*api)->StreamDestroy(stream_);
}

absl::StatusOr<bool> Stream::is_complete() const {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  return Query(**api, (*api)->StreamQuery(stream_), "cuStreamQuery");
}

absl::Status Stream::Synchronize() const {
  return WithDriver([&](const DriverApi& api) {
    return Check(api, api.StreamSynchronize(stream_), "cuStreamSynchronize");
  });
}

// ---- Event

absl::StatusOr<Event> Event::Create() {
  CUevent e = nullptr;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    return Check(api, api.EventCreate(&e, CU_EVENT_DISABLE_TIMING),
                 "cuEventCreate");
  });
  if (!status.ok()) return status;
  return Event(e);
}

Event& Event::operator=(Event&& other) noexcept {
  std::swap(event_, other.event_);
  return *this;
}

Event::~Event() {
  if (event_ == nullptr) return;
  if (auto api = Driver(); api.ok()) (*api)->EventDestroy(event_);
}

absl::Status Event::Record(const Stream& stream) {
  return WithDriver([&](const DriverApi& api) {
    return Check(api, api.EventRecord(event_, stream.handle()),
                 "cuEventRecord");
  });
}

absl::StatusOr<bool> Event::is_complete() const {
  absl::StatusOr<const DriverApi*> api = Driver();
  if (!api.ok()) return api.status();
  return Query(**api, (*api)->EventQuery(event_), "cuEventQuery");
}

absl::Status Event::Synchronize() const {
  return WithDriver([&](const DriverApi& api) {
    return Check(api, api.EventSynchronize(event_), "cuEventSynchronize");
  });
}

// ---- DeviceBuffer

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  CUdeviceptr p = 0;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    return Check(api, api.MemAlloc(&p, bytes), "cuMemAlloc");
  });
  if (!status.ok()) return status;
  return DeviceBuffer(p, bytes);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  std::swap(ptr_, other.ptr_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ == 0) return;
  if (auto api = Driver(); api.ok()) (*api)->MemFree(ptr_);
}

absl::Status DeviceBuffer::CopyFromHost(const void* src, size_t bytes) {
  if (bytes > bytes_) return absl::OutOfRangeError("copy larger than buffer");
  return WithDriver([&](const DriverApi& api) {
    return Check(api, api.MemcpyHtoD(ptr_, src, bytes), "cuMemcpyHtoD");
  });
}

absl::Status DeviceBuffer::CopyToHost(void* dst, size_t bytes) const {
  if (bytes > bytes_) return absl::OutOfRangeError("copy larger than buffer");
  return WithDriver([&](const DriverApi& api) {
    return Check(api, api.MemcpyDtoH(dst, ptr_, bytes), "cuMemcpyDtoH");
  });
}

// ---- Kernel

absl::StatusOr<CUfunction> Kernel::Function() const {
  CUfunction f = nullptr;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    return Check(api, api.KernelGetFunction(&f, kernel_),
                 "cuKernelGetFunction");
  });
  if (!status.ok()) return status;
  return f;
}

absl::StatusOr<int> Kernel::Attribute(CUfunction_attribute attribute) const {
  int value = 0;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    return Check(api,
                 api.KernelGetAttribute(&value, attribute, kernel_, api.device),
                 "cuKernelGetAttribute");
  });
  if (!status.ok()) return status;
  return value;
}

absl::StatusOr<int> Kernel::Registers() const {
  return Attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
}
absl::StatusOr<int> Kernel::MaxThreadsPerBlock() const {
  return Attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
}
absl::StatusOr<int> Kernel::SharedBytes() const {
  return Attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
}

absl::Status Kernel::LaunchWithParams(Dim3 grid, Dim3 block,
                                      unsigned shared_bytes,
                                      const Stream& stream,
                                      void** params) const {
  absl::StatusOr<CUfunction> function = Function();
  if (!function.ok()) return function.status();
  return WithDriver([&](const DriverApi& api) {
    return Check(api,
                 api.LaunchKernel(*function, grid.x, grid.y, grid.z, block.x,
                                  block.y, block.z, shared_bytes,
                                  stream.handle(), params, nullptr),
                 "cuLaunchKernel");
  });
}

// ---- Library

absl::StatusOr<Library> Library::Load(const ObjectCode& code) {
  if (code.code_type == CodeType::kLtoir) {
    return absl::FailedPreconditionError(
        "LTO-IR cannot be loaded: link it first (jitcache::Linker) into a "
        "cubin or PTX");
  }
  if (code.code_type == CodeType::kOptixIr) {
    return absl::FailedPreconditionError(
        "OptiX IR is loaded by OptiX (optixModuleCreate), not by the CUDA "
        "driver");
  }
  if (code.code_type == CodeType::kObject ||
      code.code_type == CodeType::kLibrary) {
    return absl::FailedPreconditionError(
        "host objects and archives are link inputs: link them first");
  }
  if (!code.compiled || code.bytes.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", code.name, "' has no object to load (it did not ",
                     "compile); its log:\n", code.log));
  }
  // Read where they lie (a large hit's, in the daemon's sealed file). PTX
  // must be NUL-terminated for the driver's JIT.
  std::string ptx;
  const void* image = code.bytes.data();
  if (code.code_type == CodeType::kPtx) {
    ptx = code.bytes.str() + '\0';
    image = ptx.data();
  }
  CUlibrary library = nullptr;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    return Check(api,
                 api.LibraryLoadData(&library, image, nullptr, nullptr, 0,
                                     nullptr, nullptr, 0),
                 absl::StrCat("cuLibraryLoadData(", code.name, ")"));
  });
  if (!status.ok()) return status;
  return Library(library, code.symbol_mapping);
}

absl::StatusOr<Library> Library::LoadFromFile(const std::string& path) {
  CUlibrary library = nullptr;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    return Check(api,
                 api.LibraryLoadFromFile(&library, path.c_str(), nullptr,
                                         nullptr, 0, nullptr, nullptr, 0),
                 absl::StrCat("cuLibraryLoadFromFile(", path, ")"));
  });
  if (!status.ok()) return status;
  return Library(library, {});
}

Library::Library(Library&& other) noexcept
    : library_(other.library_), symbols_(std::move(other.symbols_)) {
  other.library_ = nullptr;
}

Library& Library::operator=(Library&& other) noexcept {
  std::swap(library_, other.library_);
  std::swap(symbols_, other.symbols_);
  return *this;
}

Library::~Library() {
  if (library_ == nullptr) return;
  if (auto api = Driver(); api.ok()) (*api)->LibraryUnload(library_);
}

absl::StatusOr<Kernel> Library::GetKernel(const std::string& name) const {
  auto it = symbols_.find(name);
  const std::string& symbol = it != symbols_.end() ? it->second : name;
  CUkernel kernel = nullptr;
  absl::Status status = WithDriver([&](const DriverApi& api) {
    return Check(api, api.LibraryGetKernel(&kernel, library_, symbol.c_str()),
                 absl::StrCat("cuLibraryGetKernel(", name,
                              symbol != name ? " -> " + symbol : "", ")"));
  });
  if (!status.ok()) return status;
  return Kernel(kernel);
}

}  // namespace jitcache
