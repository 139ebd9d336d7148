// Time from process start to the first launched kernel, for the CUB kernel
// of the benchmarks, three ways:
//   nvrtc SOCKET     compile in this process with NVRTC (the daemon is not
//                    asked: the client's local compile), load the cubin
//   hit SOCKET       a jitcache hit, load the cubin
//   ptx-jit SOCKET   a jitcache hit for PTX, loaded through the driver's JIT
//                    (run with CUDA_CACHE_DISABLE=1 to keep its cache out)
// Prints {"mode": ..., "first_launch_unix_us": ...}; bench/gpu_first_launch.sh
// subtracts the time it started the process.
#include <cstdio>
#include <string>

#include "absl/time/clock.h"
#include "bench/kernels.h"
#include "jitcache/client.h"
#include "jitcache/library.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string mode = argv[1];
  const bool local = mode == "nvrtc";
  auto client = jitcache::Client::Connect(
      {.socket_path = local ? "/nonexistent/jitcache.sock" : argv[2],
       .local_fallback = local});
  auto arch = jitcache::CurrentDeviceArch();
  if (!arch.ok()) {
    std::fprintf(stderr, "%s\n", arch.status().ToString().c_str());
    return 1;
  }
  jitcache::ProgramOptions options;
  options.arch = *arch;
  options.name_expressions = jitcache::bench::CubNames();
  const jitcache::CodeType target =
      mode == "ptx-jit" ? jitcache::CodeType::kPtx : jitcache::CodeType::kCubin;
  auto code = client->Compile(
      jitcache::Program(jitcache::bench::kCub, "bench.cu"), options, target);
  if (!code.ok() || !code->compiled) {
    std::fprintf(stderr, "compile failed\n");
    return 1;
  }
  auto library = code->Load();
  if (!library.ok()) {
    std::fprintf(stderr, "%s\n", library.status().ToString().c_str());
    return 1;
  }
  auto kernel = library->GetKernel(options.name_expressions[0]);
  auto buffer = jitcache::DeviceBuffer::Allocate(512 * sizeof(int));
  auto stream = jitcache::Stream::Create();
  if (!kernel.ok() || !buffer.ok() || !stream.ok()) return 1;
  if (!kernel->Launch({1}, {128}, 0, *stream, buffer->ptr()).ok() ||
      !stream->Synchronize().ok()) {
    return 1;
  }
  std::printf(
      "{\"mode\": \"%s\", \"served\": \"%s\", \"first_launch_unix_us\": "
      "%lld}\n",
      mode.c_str(), std::string(jitcache::ServedName(code->served)).c_str(),
      static_cast<long long>(absl::ToUnixMicros(absl::Now())));
  return 0;
}
