#ifndef JITCACHE_SERVER_BUILD_NVVM_LIBRARY_H_
#define JITCACHE_SERVER_BUILD_NVVM_LIBRARY_H_

// libNVVM (libnvvm.so.4), opened by path: the daemon registers one
// (--libnvvm) and its workers make a caller's calls to it. No part of the
// build links against libNVVM: the toolkit's CUDA images often lack it
// (only nvvm/libdevice), and a node may use the one of a Python wheel.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"

namespace jitcache {

// Thread-safety: Run from any number of threads (libNVVM's programs are
// independent); the object outlives its calls.
class NvvmLibrary {
 public:
  // FAILED_PRECONDITION when `path` cannot be loaded or lacks a function
  // of libNVVM's C API.
  static absl::StatusOr<std::unique_ptr<NvvmLibrary>> Open(
      const std::string& path);
  ~NvvmLibrary();
  NvvmLibrary(const NvvmLibrary&) = delete;
  NvvmLibrary& operator=(const NvvmLibrary&) = delete;

  // Fills the versions of `lib` from nvvmVersion and nvvmIRVersion.
  absl::Status DescribeInto(ToolchainInfo::Library* lib) const;

  // Makes `calls` on a new program, in order, and answers what the last
  // one (a compile or a verify) gave: its result, the log and the compiled
  // result as the caller's reads get them (ActionResult::nvvm_run; object:
  // the compiled result's buffer; log: the log's text). INVALID_ARGUMENT
  // for calls that are not a program's (no compile or verify last), and
  // FAILED_PRECONDITION when libNVVM refused a module that the caller was
  // told it took (libnvvm.so.4 answers adds itself).
  absl::StatusOr<ActionResult> Run(
      const std::vector<v1::NvvmCall>& calls) const;

  struct Api;  // the C API's functions (nvvm_library.cc)

 private:
  NvvmLibrary(void* handle, std::unique_ptr<Api> api);

  void* handle_;
  std::unique_ptr<Api> api_;
};

// The daemon's libNVVM: `path` hashed (ptxas_registry.h's HashToolkitFile),
// named "libnvvm.so.4", with its versions from loading it once.
absl::StatusOr<ToolchainInfo::Library> RegisterNvvm(const std::string& path);

// The toolkit's own, $cuda_root/nvvm/lib64/libnvvm.so.4, when it is there;
// "" otherwise.
std::string ToolkitLibNvvm(const std::string& cuda_root);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_NVVM_LIBRARY_H_
