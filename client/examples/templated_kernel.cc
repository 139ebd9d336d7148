// Compiles a templated kernel through jitcached, loads it, launches it and
// checks the result. Needs a running daemon (or falls back to a local
// NVRTC compile) and a GPU.
//
//   build/client/examples/jitcache_example [--arch sm_90]
#include <cstdio>
#include <cstring>
#include <vector>

#include "jitcache/client.h"
#include "jitcache/library.h"

namespace {

constexpr char kSource[] = R"(
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

int Fail(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  jitcache::ProgramOptions options;
  options.arch = "sm_90";
  if (argc == 3 && std::strcmp(argv[1], "--arch") == 0) options.arch = argv[2];
  options.name_expressions = {"axpy<float>"};

  auto client = jitcache::Client::Connect();
  if (!client.ok()) return Fail("connect", client.status());
  auto code = client->Compile(jitcache::Program(kSource, "axpy.cu"), options,
                              jitcache::CodeType::kCubin);
  if (!code.ok()) return Fail("compile", code.status());
  if (!code->compiled) {
    std::fprintf(stderr, "compile error:\n%s", code->log.c_str());
    return 1;
  }
  std::printf("compiled (%s), %zu bytes\n",
              std::string(jitcache::ServedName(code->served)).c_str(),
              code->bytes.size());

  auto library = code->Load();
  if (!library.ok()) return Fail("load", library.status());
  auto kernel = library->GetKernel("axpy<float>");  // a name expression
  if (!kernel.ok()) return Fail("kernel", kernel.status());

  constexpr int kN = 1 << 20;
  std::vector<float> x(kN), y(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = 1.0f;
  }
  auto dx = jitcache::DeviceBuffer::Allocate(kN * sizeof(float));
  auto dy = jitcache::DeviceBuffer::Allocate(kN * sizeof(float));
  if (!dx.ok() || !dy.ok())
    return Fail("allocate", dx.ok() ? dy.status() : dx.status());
  if (auto s = dx->CopyFromHost(x.data(), kN * sizeof(float)); !s.ok())
    return Fail("copy", s);
  if (auto s = dy->CopyFromHost(y.data(), kN * sizeof(float)); !s.ok())
    return Fail("copy", s);
  auto stream = jitcache::Stream::Create();
  if (!stream.ok()) return Fail("stream", stream.status());
  const float a = 2.0f;
  const int n = kN;
  if (auto s = kernel->Launch({(kN + 255) / 256}, {256}, 0, *stream, a,
                              dx->ptr(), dy->ptr(), n);
      !s.ok()) {
    return Fail("launch", s);
  }
  if (auto s = stream->Synchronize(); !s.ok()) return Fail("sync", s);
  if (auto s = dy->CopyToHost(y.data(), kN * sizeof(float)); !s.ok())
    return Fail("copy", s);
  for (int i = 0; i < kN; ++i) {
    const float expected = a * static_cast<float>(i % 1000) + 1.0f;
    if (y[i] != expected) {
      std::fprintf(stderr, "y[%d] = %f, expected %f\n", i, y[i], expected);
      return 1;
    }
  }
  std::printf("axpy<float> on %d elements: correct\n", kN);
  return 0;
}
