#ifndef JITCACHE_CLIENT_LIBRARY_H_
#define JITCACHE_CLIENT_LIBRARY_H_

// Loading and launching through the CUDA driver's library API. The driver is
// opened at run time (no link dependency); without one, every call here
// returns FAILED_PRECONDITION saying so. Errors carry the driver's error name
// and text. All types are move-only RAII handles; none is synchronised.
#include <cuda.h>

#include <cstddef>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "jitcache/object_code.h"

namespace jitcache {

// The architecture of device 0, e.g. "sm_90", for ProgramOptions::arch.
absl::StatusOr<std::string> CurrentDeviceArch();

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// A CUstream, created non-blocking.
class Stream {
 public:
  static absl::StatusOr<Stream> Create();
  Stream(Stream&& other) noexcept : stream_(other.stream_) {
    other.stream_ = nullptr;
  }
  Stream& operator=(Stream&& other) noexcept;
  ~Stream();

  // Never blocks: true when all work submitted so far has finished.
  absl::StatusOr<bool> is_complete() const;
  absl::Status Synchronize() const;
  CUstream handle() const { return stream_; }

 private:
  explicit Stream(CUstream s) : stream_(s) {}
  CUstream stream_ = nullptr;
};

// A CUevent (timing disabled).
class Event {
 public:
  static absl::StatusOr<Event> Create();
  Event(Event&& other) noexcept : event_(other.event_) {
    other.event_ = nullptr;
  }
  Event& operator=(Event&& other) noexcept;
  ~Event();

  absl::Status Record(const Stream& stream);
  // Never blocks: true when the work before the recorded point is done.
  absl::StatusOr<bool> is_complete() const;
  absl::Status Synchronize() const;
  CUevent handle() const { return event_; }

 private:
  explicit Event(CUevent e) : event_(e) {}
  CUevent event_ = nullptr;
};

// Device memory, for inputs and outputs of launches.
class DeviceBuffer {
 public:
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(other.ptr_), bytes_(other.bytes_) {
    other.ptr_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  absl::Status CopyFromHost(const void* src, size_t bytes);
  absl::Status CopyToHost(void* dst, size_t bytes) const;
  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  DeviceBuffer(CUdeviceptr p, size_t n) : ptr_(p), bytes_(n) {}
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// A kernel of a loaded Library; valid while the Library lives.
class Kernel {
 public:
  CUkernel handle() const { return kernel_; }
  // The kernel as a CUfunction of the current context.
  absl::StatusOr<CUfunction> Function() const;
  absl::StatusOr<int> Registers() const;
  absl::StatusOr<int> MaxThreadsPerBlock() const;
  absl::StatusOr<int> SharedBytes() const;  // static shared memory

  // Launches on `stream` with the given arguments, passed by value as the
  // kernel's parameters (pass CUdeviceptr for pointers).
  template <typename... Args>
  absl::Status Launch(Dim3 grid, Dim3 block, unsigned shared_bytes,
                      const Stream& stream, Args... args) const {
    void* params[] = {static_cast<void*>(&args)..., nullptr};
    return LaunchWithParams(grid, block, shared_bytes, stream, params);
  }
  absl::Status LaunchWithParams(Dim3 grid, Dim3 block, unsigned shared_bytes,
                                const Stream& stream, void** params) const;

 private:
  friend class Library;
  explicit Kernel(CUkernel k) : kernel_(k) {}
  absl::StatusOr<int> Attribute(CUfunction_attribute attribute) const;
  CUkernel kernel_ = nullptr;
};

// A loaded CUlibrary (cubin, PTX or fatbin), unloaded on destruction.
class Library {
 public:
  // LTO-IR cannot be loaded: link it first (FAILED_PRECONDITION says so).
  static absl::StatusOr<Library> Load(const ObjectCode& code);
  static absl::StatusOr<Library> LoadFromFile(const std::string& path);

  Library(Library&& other) noexcept;
  Library& operator=(Library&& other) noexcept;
  ~Library();

  // `name` may be a name expression of the compile ("my_kernel<float>"),
  // looked up in the symbol mapping the daemon returned, or a plain symbol.
  absl::StatusOr<Kernel> GetKernel(const std::string& name) const;
  CUlibrary handle() const { return library_; }

 private:
  Library(CUlibrary library, std::map<std::string, std::string> symbols)
      : library_(library), symbols_(std::move(symbols)) {}
  CUlibrary library_ = nullptr;
  std::map<std::string, std::string> symbols_;
};

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_LIBRARY_H_
