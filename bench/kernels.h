#ifndef JITCACHE_BENCH_KERNELS_H_
#define JITCACHE_BENCH_KERNELS_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace jitcache::bench {

// The three kernels every measurement uses: a small one (a ~4 KiB cubin),
// a CUB one (~150 KiB cubin, about a second of NVRTC) and a generated one
// (a ~1 MiB cubin: 54 instantiations of a CUB sort).
inline constexpr char kSmall[] = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

inline constexpr char kCub[] = R"(
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
template __global__ void typed_sort<int, 128, 4>(int*);
)";

inline std::vector<std::string> CubNames() {
  return {"typed_sort<int, 128, 4>"};
}

inline std::vector<std::string> LargeNames() {
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

}  // namespace jitcache::bench

#endif  // JITCACHE_BENCH_KERNELS_H_
