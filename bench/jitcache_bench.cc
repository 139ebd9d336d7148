// The measuring half of the benchmarks; bench/run.py drives it and writes
// RESULTS.md. Each subcommand prints one JSON object on stdout.
//
//   jitcache_bench hit-latency SOCKET ITERS [CASE...]  (small, cub, large,
//                                  big-table; without: the first three)
//   jitcache_bench hit-loop SOCKET SECONDS
//   jitcache_bench miss-latency SOCKET COUNT SEED
//   jitcache_bench batch-hits SOCKET KERNELS ROUNDS
//   jitcache_bench first-hit SOCKET       (a fresh process's first hit)
//   jitcache_bench include-tree-hit SOCKET DIR HEADERS ITERS
//   jitcache_bench filecache-hit DIR ITERS
//   jitcache_bench filecache-get-or-compile DIR
//   jitcache_bench populate STORE_DIR ENTRIES OBJECT_BYTES
//   jitcache_bench source cub        (prints the CUB kernel's source)
//   jitcache_bench case small|cub|large  (a case's source and names)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "bench/kernels.h"
#include "common/digest.h"
#include "jitcache/client.h"
#include "server/build/cuda_compiler.h"
#include "server/store/node_store.h"

namespace jitcache::bench {
namespace {

struct Case {
  const char* name;
  std::string source;
  std::vector<std::string> names;
};

std::vector<Case> Cases() {
  return {{"small", kSmall, {}},
          {"cub", kCub, CubNames()},
          {"large", kCub, LargeNames()},
          {"big-table", kBigTable, {}}};
}

ProgramOptions OptionsFor(const Case& c) {
  ProgramOptions options;
  options.arch = "sm_90";
  options.name_expressions = c.names;
  return options;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

std::string Stats(const std::vector<double>& us) {
  return absl::StrCat("{\"p50_us\": ", Percentile(us, 0.5),
                      ", \"p90_us\": ", Percentile(us, 0.9),
                      ", \"p99_us\": ", Percentile(us, 0.99),
                      ", \"n\": ", us.size(), "}");
}

// The cases hit-latency measures unless named: the three every earlier
// result has (big-table is asked for by name).
const std::vector<std::string>& DefaultHitCases() {
  static const auto* names =
      new std::vector<std::string>{"small", "cub", "large"};
  return *names;
}

int HitLatency(const std::string& socket, int iters,
               const std::vector<std::string>& names) {
  const std::vector<Case> all = Cases();
  std::vector<Case> cases;
  for (const std::string& name : names) {
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const Case& c) { return name == c.name; });
    if (it == all.end()) {
      std::fprintf(stderr, "hit-latency: no case %s\n", name.c_str());
      return 2;
    }
    cases.push_back(*it);
  }
  auto client =
      Client::Connect({.socket_path = socket, .local_fallback = false});
  std::vector<std::string> rows;
  for (const Case& c : cases) {
    const Program program(c.source, "bench.cu");
    auto first = client->Compile(program, OptionsFor(c), CodeType::kCubin);
    if (!first.ok() || !first->compiled) {
      std::fprintf(
          stderr, "%s: %s\n", c.name,
          first.ok() ? first->log.c_str() : first.status().ToString().c_str());
      return 1;
    }
    std::vector<double> us;
    for (int i = 0; i < iters; ++i) {
      const absl::Time t = absl::Now();
      auto hit = client->Compile(program, OptionsFor(c), CodeType::kCubin);
      us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t));
      if (!hit.ok() || hit->served != Served::kHit) return 1;
    }
    rows.push_back(absl::StrCat(
        "\"", c.name, "\": {\"object_bytes\": ", first->bytes.size(),
        ", \"nvrtc_ms\": ", first->compile_time_us / 1000.0,
        ", \"hit\": ", Stats(us), "}"));
  }
  std::printf("{%s}\n", absl::StrJoin(rows, ", ").c_str());
  return 0;
}

// End to end, misses of `count` small kernels no store has seen (each with
// a constant of its own, seeded by `seed`): what a caller waits for a
// compile, daemon and all, against what the compile itself took.
int MissLatency(const std::string& socket, int count, const std::string& seed) {
  auto client =
      Client::Connect({.socket_path = socket, .local_fallback = false});
  std::vector<double> us, compile_us;
  for (int i = 0; i < count; ++i) {
    const Program program(
        absl::StrCat("extern \"C\" __global__ void miss(float* x) { x[0] = ",
                     seed, i, ".0f; }"),
        "miss.cu");
    ProgramOptions options;
    options.arch = "sm_90";
    const absl::Time t = absl::Now();
    auto code = client->Compile(program, options, CodeType::kCubin);
    us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t));
    if (!code.ok() || code->served != Served::kMiss) {
      std::fprintf(stderr, "miss-latency: %s\n",
                   code.ok() ? "not a miss" : code.status().ToString().c_str());
      return 1;
    }
    compile_us.push_back(static_cast<double>(code->compile_time_us));
  }
  std::printf("{\"miss\": %s, \"compile\": %s}\n", Stats(us).c_str(),
              Stats(compile_us).c_str());
  return 0;
}

int HitLoop(const std::string& socket, double seconds) {
  auto client =
      Client::Connect({.socket_path = socket, .local_fallback = false});
  const Case small = Cases()[0];
  const Program program(small.source, "bench.cu");
  const absl::Time end = absl::Now() + absl::Seconds(seconds);
  long hits = 0, errors = 0;
  while (absl::Now() < end) {
    auto code = client->Compile(program, OptionsFor(small), CodeType::kCubin);
    if (code.ok() && code->served == Served::kHit) {
      ++hits;
    } else if (errors++ == 0) {
      std::fprintf(stderr, "hit-loop: %s\n",
                   code.ok() ? "answered, but not as a hit"
                             : code.status().ToString().c_str());
    }
  }
  std::printf("{\"hits\": %ld, \"errors\": %ld, \"seconds\": %g}\n", hits,
              errors, seconds);
  return 0;
}

// A precompile of `kernels` distinct small kernels, all cached: the whole
// batch timed, `rounds` times, against the same hits asked one by one.
int BatchHits(const std::string& socket, int kernels, int rounds) {
  auto client =
      Client::Connect({.socket_path = socket, .local_fallback = false});
  std::vector<Client::PrecompileItem> items;
  for (int i = 0; i < kernels; ++i) {
    ProgramOptions options;
    options.arch = "sm_90";
    items.push_back({Program(absl::StrCat("#define FACTOR ", i, "\n", kSmall),
                             absl::StrCat("k", i, ".cu")),
                     options,
                     CodeType::kCubin,
                     {}});
  }
  const absl::Time fill = absl::Now();
  for (const auto& outcome : client->Precompile(items)) {
    if (!outcome.code.ok() || !outcome.code->compiled) return 1;
  }
  const double fill_s = absl::ToDoubleSeconds(absl::Now() - fill);
  std::vector<double> batch_ms, one_by_one_ms;
  for (int r = 0; r < rounds; ++r) {
    absl::Time t = absl::Now();
    for (const auto& outcome : client->Precompile(items)) {
      if (!outcome.code.ok() || outcome.code->served != Served::kHit) return 1;
    }
    batch_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    t = absl::Now();
    for (const auto& item : items) {
      auto hit = client->Compile(item.program, item.options, item.target);
      if (!hit.ok() || hit->served != Served::kHit) return 1;
    }
    one_by_one_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
  }
  std::printf(
      "{\"kernels\": %d, \"fill_s\": %g, \"precompile_ms_p50\": %g, "
      "\"precompile_ms_min\": %g, \"one_by_one_ms_p50\": %g}\n",
      kernels, fill_s, Percentile(batch_ms, 0.5),
      *std::min_element(batch_ms.begin(), batch_ms.end()),
      Percentile(one_by_one_ms, 0.5));
  return 0;
}

// From this process's start (its main) to its first hit (the CUB kernel)
// in hand: what a new process pays beyond being spawned.
int FirstHit(const std::string& socket, absl::Time main_start) {
  auto client =
      Client::Connect({.socket_path = socket, .local_fallback = false});
  const Case c = Cases()[1];
  auto hit = client->Compile(Program(c.source, "bench.cu"), OptionsFor(c),
                             CodeType::kCubin);
  const double us = absl::ToDoubleMicroseconds(absl::Now() - main_start);
  if (!hit.ok() || !hit->compiled) return 1;
  std::printf("{\"first_hit_us\": %g, \"served\": \"%s\"}\n", us,
              hit->served == Served::kHit ? "hit" : "not a hit");
  return 0;
}

// A program with its own include directory of `headers` headers (as
// CuPy's are), hit again and again: what checking the tree costs a hit.
int IncludeTreeHit(const std::string& socket, const std::string& dir,
                   int headers, int iters) {
  std::filesystem::create_directories(dir + "/sub");
  std::string all;
  for (int i = 0; i < headers; ++i) {
    const std::string name = absl::StrCat(i % 2 ? "sub/" : "", "h", i, ".h");
    std::ofstream(absl::StrCat(dir, "/", name))
        << "#pragma once\n#define H" << i << " " << i << "\n";
    absl::StrAppend(&all, "#include \"", name, "\"\n");
  }
  std::ofstream(dir + "/all.h") << all;
  // Stamps younger than the scanner's settling time are not trusted.
  absl::SleepFor(absl::Seconds(2.5));
  auto client =
      Client::Connect({.socket_path = socket, .local_fallback = false});
  const Program program(absl::StrCat("#include \"all.h\"\n", kSmall),
                        "tree.cu");
  ProgramOptions options;
  options.arch = "sm_90";
  options.include_path = {dir};
  auto first = client->Compile(program, options, CodeType::kCubin);
  if (!first.ok() || !first->compiled) {
    std::fprintf(
        stderr, "%s\n",
        first.ok() ? first->log.c_str() : first.status().ToString().c_str());
    return 1;
  }
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    const absl::Time t = absl::Now();
    auto hit = client->Compile(program, options, CodeType::kCubin);
    us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t));
    if (!hit.ok() || hit->served != Served::kHit) return 1;
  }
  std::printf("{\"headers\": %d, \"hit\": %s}\n", headers, Stats(us).c_str());
  return 0;
}

// The design most JIT libraries ship: one file per SHA-256 key in a
// directory, written to a temporary name and renamed into place.
std::string FileCacheKey(const Case& c) {
  return Digest::Of(absl::StrCat(c.source, "\n", absl::StrJoin(c.names, ","),
                                 "\n-arch=sm_90"))
      .Hex();
}

int FileCacheHit(const std::string& dir, int iters) {
  const Case c = Cases()[1];
  const std::string path = absl::StrCat(dir, "/", FileCacheKey(c));
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    const absl::Time t = absl::Now();
    // What a library does on a hit: hash the inputs, read the file.
    const std::string key = FileCacheKey(c);
    std::ifstream in(absl::StrCat(dir, "/", key), std::ios::binary);
    std::string bytes(std::istreambuf_iterator<char>(in), {});
    us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t));
    if (bytes.empty()) {
      std::fprintf(stderr, "no entry at %s\n", path.c_str());
      return 1;
    }
  }
  std::printf("{\"hit\": %s}\n", Stats(us).c_str());
  return 0;
}

int FileCacheGetOrCompile(const std::string& dir) {
  const Case c = Cases()[1];
  const std::string path = absl::StrCat(dir, "/", FileCacheKey(c));
  if (std::filesystem::exists(path)) {
    std::printf("{\"compiled\": false}\n");
    return 0;
  }
  auto compiler = CudaCompiler::Create(DefaultCudaRoot());
  if (!compiler.ok()) return 1;
  CompileJob job;
  job.program_name = "bench.cu";
  job.source = c.source;
  job.options = {"--gpu-architecture=sm_90"};
  job.name_expressions = c.names;
  job.target = ObjectKind::kCubin;
  auto result = (*compiler)->Compile(job);
  if (!result.ok() || !result->ok) return 1;
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  std::ofstream(tmp, std::ios::binary) << result->object;
  std::rename(tmp.c_str(), path.c_str());
  // Count compiles: one line per compile, appended atomically.
  const int fd = open(absl::StrCat(dir, "/compiles.log").c_str(),
                      O_WRONLY | O_CREAT | O_APPEND, 0644);
  [[maybe_unused]] ssize_t n = write(fd, "1\n", 2);
  close(fd);
  std::printf("{\"compiled\": true}\n");
  return 0;
}

int Populate(const std::string& store_dir, int entries, int object_bytes) {
  auto store = OpenRocksDbStore(store_dir);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  std::string object(object_bytes, '\0');
  const absl::Time start = absl::Now();
  for (int i = 0; i < entries; ++i) {
    // Distinct, incompressible-enough objects and keys.
    for (int b = 0; b + 8 <= object_bytes; b += 64) {
      const uint64_t v = (uint64_t{static_cast<uint32_t>(i)} << 32) ^ b ^
                         0x9e3779b97f4a7c15ull;
      std::memcpy(object.data() + b, &v, 8);
    }
    const Digest digest = Digest::Of(object);
    v1::ActionRecord record;
    record.set_format_version(1);
    record.set_outcome(v1::OUTCOME_OK);
    record.set_target(v1::TARGET_CUBIN);
    record.set_object_digest(std::string(digest.AsBytes()));
    record.set_object_size(object.size());
    record.set_compile_time_us(1000);
    const ObjectRef ref{digest, ObjectKind::kCubin, object};
    if (!(*store)
             ->PutResult(Digest::Of(absl::StrCat("entry ", i)), record,
                         {&ref, 1})
             .ok()) {
      return 1;
    }
  }
  std::printf("{\"entries\": %d, \"seconds\": %g}\n", entries,
              absl::ToDoubleSeconds(absl::Now() - start));
  return 0;
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  const absl::Time main_start = absl::Now();
  using namespace jitcache::bench;
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 2 && a[0] == "source" && a[1] == "cub") {
    std::fputs(kCub.c_str(), stdout);  // the file the nvcc peers compile
    return 0;
  }
  if (a.size() == 2 && a[0] == "case") {
    // A case's source, then its name expressions, one a line after a
    // line "--": what jitcache_nvrtc_floor compiles.
    for (const Case& c : Cases()) {
      if (a[1] != c.name) continue;
      std::printf("%s\n--\n", c.source.c_str());
      for (const std::string& n : c.names) std::printf("%s\n", n.c_str());
      return 0;
    }
    return 2;
  }
  if (a.size() >= 3 && a[0] == "hit-latency") {
    const std::vector<std::string> named(a.begin() + 3, a.end());
    return HitLatency(a[1], std::atoi(a[2].c_str()),
                      named.empty() ? DefaultHitCases() : named);
  }
  if (a.size() == 3 && a[0] == "hit-loop")
    return HitLoop(a[1], std::atof(a[2].c_str()));
  if (a.size() == 4 && a[0] == "batch-hits") {
    return BatchHits(a[1], std::atoi(a[2].c_str()), std::atoi(a[3].c_str()));
  }
  if (a.size() == 2 && a[0] == "first-hit") return FirstHit(a[1], main_start);
  if (a.size() == 4 && a[0] == "miss-latency") {
    return MissLatency(a[1], std::atoi(a[2].c_str()), a[3]);
  }
  if (a.size() == 5 && a[0] == "include-tree-hit") {
    return IncludeTreeHit(a[1], a[2], std::atoi(a[3].c_str()),
                          std::atoi(a[4].c_str()));
  }
  if (a.size() == 3 && a[0] == "filecache-hit")
    return FileCacheHit(a[1], std::atoi(a[2].c_str()));
  if (a.size() == 2 && a[0] == "filecache-get-or-compile")
    return FileCacheGetOrCompile(a[1]);
  if (a.size() == 4 && a[0] == "populate") {
    return Populate(a[1], std::atoi(a[2].c_str()), std::atoi(a[3].c_str()));
  }
  std::fprintf(stderr, "usage: see the header of bench/jitcache_bench.cc\n");
  return 2;
}
