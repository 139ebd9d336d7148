// A whole process that compiles a CUB block radix sort through the daemon
// (instantiated by a name expression), loads it, launches it and checks the
// result. Run twice by the gpu tests: the first is a MISS, the second a HIT
// in a fresh process. Prints "served=... first_launch_unix_us=... ok".
//
//   jitcache_gpu_sort_check SOCKET
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "absl/time/clock.h"
#include "jitcache/client.h"
#include "jitcache/library.h"
#include "tests/testing/kernels.h"

int Fail(const char* what, const absl::Status& s) {
  std::printf("FAILED %s: %s\n", what, s.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto client = jitcache::Client::Connect(
      {.socket_path = argv[1], .local_fallback = false});
  auto arch = jitcache::CurrentDeviceArch();
  if (!arch.ok()) return Fail("arch", arch.status());
  jitcache::ProgramOptions options;
  options.arch = *arch;
  options.name_expressions = {"block_sort<128, 4>"};
  auto code = client->Compile(
      jitcache::Program(jitcache::kernels::kBlockSort, "sort.cu"), options,
      jitcache::CodeType::kCubin);
  if (!code.ok()) return Fail("compile", code.status());
  if (!code->compiled) return Fail("compile", absl::InternalError(code->log));
  auto library = code->Load();
  if (!library.ok()) return Fail("load", library.status());
  auto kernel = library->GetKernel("block_sort<128, 4>");
  if (!kernel.ok()) return Fail("kernel", kernel.status());

  constexpr int kN = 128 * 4;
  std::vector<int> data(kN);
  std::mt19937 random(12345);
  for (int& v : data) v = static_cast<int>(random() % 100000) - 50000;
  auto buffer = jitcache::DeviceBuffer::Allocate(kN * sizeof(int));
  if (!buffer.ok()) return Fail("alloc", buffer.status());
  if (auto s = buffer->CopyFromHost(data.data(), kN * sizeof(int)); !s.ok()) {
    return Fail("copy", s);
  }
  auto stream = jitcache::Stream::Create();
  if (!stream.ok()) return Fail("stream", stream.status());
  if (auto s = kernel->Launch({1}, {128}, 0, *stream, buffer->ptr()); !s.ok()) {
    return Fail("launch", s);
  }
  if (auto s = stream->Synchronize(); !s.ok()) return Fail("sync", s);
  const int64_t launched_us = absl::ToUnixMicros(absl::Now());
  std::vector<int> sorted(kN);
  if (auto s = buffer->CopyToHost(sorted.data(), kN * sizeof(int)); !s.ok()) {
    return Fail("copy back", s);
  }
  std::sort(data.begin(), data.end());
  if (sorted != data) return Fail("check", absl::InternalError("not sorted"));
  std::printf("served=%s first_launch_unix_us=%lld ok\n",
              std::string(jitcache::ServedName(code->served)).c_str(),
              static_cast<long long>(launched_us));
  return 0;
}
