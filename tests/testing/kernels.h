#ifndef JITCACHE_TESTS_TESTING_KERNELS_H_
#define JITCACHE_TESTS_TESTING_KERNELS_H_

// CUDA sources shared by the tests and the benchmarks.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/digest.h"

namespace jitcache::kernels {

// A small kernel that NVRTC and ptxas take longer over as `unroll` grows
// (about 250 ms for a cubin at 1,000 on a 2-core machine); `n` makes the
// key.
inline std::string UnrolledKernel(int n, int unroll = 1) {
  return absl::StrCat(
      "extern \"C\" __global__ void k", n,
      "(float* x) {\n  float a = x[threadIdx.x];\n#pragma unroll\n"
      "  for (int i = 0; i < ",
      unroll, "; ++i) a = a * 1.0001f + __sinf(a) * 0.5f + ", n,
      ";\n  x[threadIdx.x] = a;\n}\n");
}

// A distinct kernel per `i` carrying `words` 32-bit constants that do not
// compress (each from a SHA-256), in `space` (__constant__ or __device__),
// so that its entry takes about 4 * `words` bytes on disk.
inline std::string IncompressibleKernel(int i, int words,
                                        const char* space = "__constant__") {
  std::string table;
  for (int j = 0; j < words; ++j) {
    const Digest d = Digest::Of(absl::StrCat(i, "/", j));
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v = (v << 8) | d.bytes[b];
    absl::StrAppend(&table, j == 0 ? "" : ",", v);
  }
  return absl::StrCat(space, " unsigned t[", words, "] = {", table,
                      "};\n__global__ void k(unsigned* x) { x[threadIdx.x] = "
                      "t[x[threadIdx.x] % ",
                      words, "] + ", i, "; }\n");
}

// y = a * x + y.
inline constexpr char kSaxpy[] = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

// CUB's block radix sort: about a second of NVRTC for one instantiation.
inline constexpr char kBlockSort[] = R"(
#include <cub/block/block_radix_sort.cuh>
template <int kThreads, int kItems>
__global__ void block_sort(int* data) {
  using Sort = cub::BlockRadixSort<int, kThreads, kItems>;
  __shared__ typename Sort::TempStorage temp;
  int items[kItems];
  for (int i = 0; i < kItems; ++i) items[i] = data[threadIdx.x * kItems + i];
  Sort(temp).SortBlockedToStriped(items);
  for (int i = 0; i < kItems; ++i) data[i * kThreads + threadIdx.x] = items[i];
}
)";

// The same sort over any type: with TypedSortNames() about 4 s of NVRTC and
// a ~1.3 MiB cubin.
inline constexpr char kTypedSort[] = R"(
#include <cub/block/block_radix_sort.cuh>
template <typename T, int kThreads, int kItems>
__global__ void typed_sort(T* data) {
  using Sort = cub::BlockRadixSort<T, kThreads, kItems>;
  __shared__ typename Sort::TempStorage temp;
  T items[kItems];
  for (int i = 0; i < kItems; ++i) items[i] = data[threadIdx.x * kItems + i];
  Sort(temp).Sort(items);
  for (int i = 0; i < kItems; ++i) data[threadIdx.x * kItems + i] = items[i];
}
)";

// 54 instantiations of typed_sort: six types x three block sizes x three
// items per thread.
inline std::vector<std::string> TypedSortNames() {
  std::vector<std::string> names;
  for (const char* type :
       {"int", "float", "double", "long", "unsigned", "short"}) {
    for (int threads : {64, 128, 256}) {
      for (int items : {4, 8, 16}) {
        names.push_back(
            absl::StrCat("typed_sort<", type, ", ", threads, ", ", items, ">"));
      }
    }
  }
  return names;
}

// A template whose scale factor comes from an in-memory header "scale.h"
// (#define SCALE ...).
inline constexpr char kScaleWithHeader[] = R"(
#include "scale.h"
template <typename T, int N>
__global__ void scale(T* x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) x[i] = x[i] * T(SCALE);
}
)";

// Two LTO units: a CUB sort kernel that calls transform(), defined in the
// other unit. Compile both with -rdc=true to LTO-IR and link.
inline constexpr char kLtoSortUnit[] = R"(
#include <cub/block/block_radix_sort.cuh>
extern __device__ int transform(int v);
extern "C" __global__ void sort_transformed(int* data) {
  using Sort = cub::BlockRadixSort<int, 128, 4>;
  __shared__ Sort::TempStorage temp;
  int items[4];
  for (int i = 0; i < 4; ++i) items[i] = transform(data[threadIdx.x * 4 + i]);
  Sort(temp).SortBlockedToStriped(items);
  for (int i = 0; i < 4; ++i) data[i * 128 + threadIdx.x] = items[i];
}
)";
inline constexpr char kLtoTransformUnit[] =
    "__device__ int transform(int v) { return 3 * v + 1; }";

}  // namespace jitcache::kernels

#endif  // JITCACHE_TESTS_TESTING_KERNELS_H_
