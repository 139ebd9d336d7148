#ifndef JITCACHE_BENCH_KERNELS_H_
#define JITCACHE_BENCH_KERNELS_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/testing/kernels.h"

namespace jitcache::bench {

// The kernels every measurement uses: a small one (a ~4 KiB cubin),
// a CUB one (~150 KiB cubin, about a second of NVRTC) and a generated one
// (a ~1.3 MiB cubin: 54 instantiations of a CUB sort). The CUB source names
// its one instantiation explicitly, so that nvcc -c compiles the same.
inline constexpr const char* kSmall = kernels::kSaxpy;
inline const std::string kCub =
    absl::StrCat(kernels::kTypedSort,
                 "template __global__ void typed_sort<int, 128, 4>(int*);\n");

// A ~1.3 MiB cubin from a two-line source and no name expressions: a
// kernel reading a 1.3 MB initialised __device__ table, which the cubin
// holds. Its hit differs from the small kernel's by the object's size
// alone (the generated kernel's also carries 54 names and CUB's headers).
inline constexpr const char* kBigTable = R"(
__device__ unsigned char table[1300000] = {1};
extern "C" __global__ void big_table(unsigned char* out, int i) {
  out[0] = table[i];
}
)";

inline std::vector<std::string> CubNames() {
  return {"typed_sort<int, 128, 4>"};
}
inline std::vector<std::string> LargeNames() {
  return kernels::TypedSortNames();
}

}  // namespace jitcache::bench

#endif  // JITCACHE_BENCH_KERNELS_H_
