// Throughput of the object digest (SHA-256) at the sizes the cache hashes:
// a small kernel, the 150 KiB CUB cubin, a 1.3 MiB cubin.
// Usage: jitcache_digest_bench [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/digest.h"

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  std::mt19937 random(1);
  std::printf("{");
  const char* separator = "";
  for (size_t size : {size_t{4} << 10, size_t{150} << 10, size_t{1331} << 10}) {
    std::string data(size, '\0');
    for (char& c : data) c = static_cast<char>(random());
    std::vector<double> us;
    unsigned sink = 0;
    for (int i = 0; i < rounds; ++i) {
      const auto start = std::chrono::steady_clock::now();
      sink += jitcache::Digest::Of(data).bytes[0];
      us.push_back(std::chrono::duration<double, std::micro>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    }
    std::sort(us.begin(), us.end());
    const double p50 = us[us.size() / 2];
    std::printf("%s\"%zu\": {\"p50_us\": %.2f, \"mb_per_s\": %.0f, \"x\": %u}",
                separator, size, p50, size / p50, sink & 1);
    separator = ", ";
  }
  std::printf("}\n");
  return 0;
}
