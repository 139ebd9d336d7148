#ifndef JITCACHE_SERVER_BUILD_CUDA_COMPILER_H_
#define JITCACHE_SERVER_BUILD_CUDA_COMPILER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/build/compiler.h"

namespace jitcache {

// Compiles with the NVRTC and links with the nvJitLink the daemon is linked
// against (nvrtc_compile.cc, nvjitlink_link.cc). The toolkit's
// include/ (and include/cccl) under `cuda_root` are on every include path,
// as with nvcc, and their content is part of the fingerprint.
// Thread-safe: NVRTC programs are per call.
class CudaCompiler final : public Compiler {
 public:
  // Queries NVRTC and nvJitLink, hashes the include trees and runs a probe
  // compile; takes a fraction of a second. The toolkit's ptxas and each of
  // `ptxas` are hashed for the ptxas runs (ptxas_registry.h), and `libnvvm`
  // for libNVVM's (nvvm_library.h; "" the toolkit's when it has one,
  // "none" none).
  static absl::StatusOr<std::unique_ptr<CudaCompiler>> Create(
      const std::string& cuda_root, const std::vector<std::string>& ptxas = {},
      const std::string& libnvvm = "");

  // For a worker process: compiles with these include directories; the
  // toolchain's other fields (fingerprint, archs) stay empty.
  static std::unique_ptr<CudaCompiler> ForWorker(
      std::vector<std::string> include_dirs);

  absl::StatusOr<ActionResult> Compile(const CompileJob& job) override;
  absl::StatusOr<ActionResult> Link(const LinkJob& job) override;
  const ToolchainInfo& toolchain() const override { return toolchain_; }

 private:
  explicit CudaCompiler(ToolchainInfo toolchain)
      : toolchain_(std::move(toolchain)) {}

  ToolchainInfo toolchain_;
};

// CUDA_HOME, else /usr/local/cuda.
std::string DefaultCudaRoot();

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_CUDA_COMPILER_H_
