// The store's lifecycle, measured: compression at rest, the cap under churn,
// hit latency with eviction running, and bundle export/import rates.
// Prints a markdown section (RESULTS.md) and a JSON line.
//
//   build/bench/jitcache_store_bench [--entries=10000] [--cap_mb=64]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/digest.h"
#include "common/size_units.h"
#include "jitcache/client.h"
#include "jitcache/store_admin.h"
#include "server/build/cuda_compiler.h"
#include "server/daemon.h"
#include "server/store/node_store.h"
#include "server/store/store_janitor.h"
#include "tests/testing/kernels.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

struct Objects {
  std::vector<std::string> ptx, cubin, ltoir;
};

// Real objects of each kind: saxpy, the CUB block sort and a few kernels of
// ordinary arithmetic.
Objects CompileCorpus(Compiler& compiler) {
  std::vector<std::string> sources = {kernels::kSaxpy, kernels::kBlockSort};
  for (int i = 0; i < 8; ++i) {
    sources.push_back(
        absl::StrCat("__global__ void k", i,
                     "(float* x, const float* y, int n) {\n"
                     "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "  if (t < n) { float v = y[t];\n",
                     std::string(4 + i, ' '), "for (int j = 0; j < ", 3 + i,
                     "; ++j) v = v * 1.0001f + __sinf(v) * ", i + 1,
                     ";\n  x[t] = v; }\n}\n"));
  }
  Objects out;
  for (size_t s = 0; s < sources.size(); ++s) {
    for (ObjectKind kind :
         {ObjectKind::kPtx, ObjectKind::kCubin, ObjectKind::kLtoir}) {
      CompileJob job;
      job.program_name = "k.cu";
      job.source = sources[s];
      job.target = kind;
      job.options = {"--gpu-architecture=sm_90"};
      if (kind == ObjectKind::kLtoir) job.options.push_back("--dlink-time-opt");
      if (s == 1) job.name_expressions = {"block_sort<128, 4>"};
      auto r = compiler.Compile(job);
      if (!r.ok() || !r->ok) {
        std::cerr << "compile failed: "
                  << (r.ok() ? r->log : std::string(r.status().message()))
                  << "\n";
        std::exit(1);
      }
      (kind == ObjectKind::kPtx     ? out.ptx
       : kind == ObjectKind::kCubin ? out.cubin
                                    : out.ltoir)
          .push_back(r->object);
    }
  }
  return out;
}

v1::ActionRecord RecordFor(const std::string& object, const std::string& fp,
                           int64_t now_ms) {
  v1::ActionRecord r;
  r.set_format_version(1);
  r.set_outcome(v1::OUTCOME_OK);
  r.set_target(v1::TARGET_CUBIN);
  r.set_object_digest(std::string(Digest::Of(object).AsBytes()));
  r.set_object_size(object.size());
  r.set_toolchain_fingerprint(fp);
  r.set_arch("sm_90");
  r.add_options("--gpu-architecture=sm_90");
  r.set_program_name("k.cu");
  r.set_created_unix_ms(now_ms);
  r.set_last_used_unix_ms(now_ms);
  return r;
}

// A distinct object shaped like a real one: the real bytes and a suffix.
std::string Variant(const std::string& base, int i) {
  return base + std::string(Digest::Of(absl::StrCat(i)).AsBytes());
}

absl::Status Put(ObjectStore& store, const std::string& object,
                 const std::string& key, const std::string& fp) {
  const Digest digest = Digest::Of(object);
  const ObjectRef ref{digest, ObjectKind::kCubin, object};
  return store.PutResult(Digest::Of(key),
                         RecordFor(object, fp, absl::ToUnixMillis(absl::Now())),
                         {&ref, 1});
}

double P50Us(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Hit latency of the store itself: record, then verified object.
double HitP50(ObjectStore& store, const std::vector<std::string>& keys,
              int reads) {
  std::vector<double> us;
  for (int i = 0; i < reads; ++i) {
    const Digest key = Digest::Of(keys[i % keys.size()]);
    const absl::Time t = absl::Now();
    auto record = store.GetAction(key);
    if (record.ok() && record->has_value()) {
      auto object =
          store.GetObject(*Digest::FromBytes((*record)->object_digest()));
      (void)object;
    }
    us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t));
  }
  return P50Us(us);
}

void CompressionTable(const Objects& objects, const std::string& fp) {
  std::cout << "\n### Compression at rest (RocksDB blob files)\n\n"
               "Real objects (saxpy, CUB block sort, 8 arithmetic kernels; "
               "sm_90), each stored once, store flushed and compacted. Bytes "
               "of the store's files per byte of object, and the store-level "
               "hit p50 (record + verified object read) of the 150 KiB CUB "
               "cubin.\n\n"
               "| compression | PTX | cubin | LTO-IR | hit p50 (CUB cubin) |\n"
               "|---|---|---|---|---|\n";
  for (Compression c :
       {Compression::kNone, Compression::kLz4, Compression::kZstd}) {
    std::string row = absl::StrCat("| ", CompressionName(c));
    double hit = 0;
    for (const auto* set : {&objects.ptx, &objects.cubin, &objects.ltoir}) {
      testing::TempDir dir;
      auto store = OpenRocksDbStore(dir.Sub("s"), {c, 0});
      if (!store.ok()) std::exit(1);
      uint64_t raw = 0;
      std::vector<std::string> keys;
      for (size_t i = 0; i < set->size(); ++i) {
        keys.push_back(absl::StrCat("k", i));
        if (!Put(**store, (*set)[i], keys.back(), fp).ok()) std::exit(1);
        raw += (*set)[i].size();
      }
      (void)(*store)->Reclaim(1.0);
      absl::StrAppendFormat(&row, " | %.3f",
                            static_cast<double>((*store)->Stats().bytes) / raw);
      if (set == &objects.cubin) {
        HitP50(**store, {"k1"}, 200);  // warm
        hit = HitP50(**store, {"k1"}, 3000);
      }
    }
    absl::StrAppendFormat(&row, " | %.1f µs |\n", hit);
    std::cout << row;
  }
}

struct ChurnResult {
  double idle_us = 0, during_us = 0, inserts_per_s = 0;
  uint64_t max_bytes = 0, samples = 0, over = 0, left = 0, evicted = 0,
           runs = 0;
};

// `entries` inserts while a reader hits a hot set. Both runs size RocksDB
// from `cap` (memtables, blob files), so that they differ in eviction only.
ChurnResult Churn(const Objects& objects, const std::string& fp, int entries,
                  uint64_t cap, bool evict) {
  testing::TempDir dir;
  auto store = OpenRocksDbStore(dir.Sub("s"), {Compression::kZstd, cap});
  if (!store.ok()) std::exit(1);
  JanitorOptions options;
  options.max_size = evict ? cap : 0;
  options.tick = absl::Milliseconds(100);
  StoreJanitor janitor(store->get(), options);
  std::vector<std::string> hot;
  for (int i = 0; i < 50; ++i) {
    hot.push_back(absl::StrCat("hot", i));
    (void)Put(**store, Variant(objects.cubin[i % objects.cubin.size()], -i),
              hot.back(), fp);
  }
  ChurnResult r;
  HitP50(**store, hot, 2000);
  r.idle_us = HitP50(**store, hot, 20000);
  std::atomic<bool> churning{true};
  std::vector<double> during;
  std::thread reader([&] {
    while (churning) during.push_back(HitP50(**store, hot, 500));
  });
  const absl::Time start = absl::Now();
  for (int i = 0; i < entries; ++i) {
    const std::string& base = objects.cubin[i % objects.cubin.size()];
    if (!Put(**store, Variant(base, i), absl::StrCat("churn", i), fp).ok()) {
      std::cerr << "put failed\n";
    }
    const uint64_t bytes = (*store)->Stats().bytes;
    r.max_bytes = std::max(r.max_bytes, bytes);
    ++r.samples;
    r.over += evict && bytes > cap;
  }
  r.inserts_per_s = entries / absl::ToDoubleSeconds(absl::Now() - start);
  churning = false;
  reader.join();
  r.during_us = P50Us(during);
  const StoreStats stats = (*store)->Stats();
  r.left = stats.actions;
  r.evicted = stats.evicted_records;
  r.runs = janitor.runs();
  return r;
}

void ChurnTable(const Objects& objects, const std::string& fp, int entries,
                uint64_t cap) {
  const ChurnResult capped = Churn(objects, fp, entries, cap, true);
  const ChurnResult open = Churn(objects, fp, entries, cap, false);
  std::cout << absl::StrFormat(
      "\n### The cap under churn\n\n"
      "%d inserts of distinct cubins (the real cubins above, each made "
      "distinct by a 32-byte suffix) into a RocksDB store capped at %s, "
      "janitor at the default watermarks (95%% / 85%%); the store's size "
      "(RocksDB's SST + blob + WAL files) sampled after every insert. The "
      "same inserts into the same store configuration with no cap are the "
      "baseline for hit latency (a reader thread hits 50 hot entries "
      "throughout; store-level hits).\n\n"
      "| measure | capped (evicting) | uncapped |\n|---|---|---|\n"
      "| largest size / cap | %.4f (%s) | - (%s) |\n"
      "| samples over the cap | %d of %d | - |\n"
      "| entries left / evicted | %d / %d in %d passes | %d / 0 |\n"
      "| inserts/s | %.0f | %.0f |\n"
      "| hit p50, before the inserts | %.1f µs | %.1f µs |\n"
      "| hit p50, during the inserts | %.1f µs | %.1f µs |\n"
      "| eviction's cost on hit p50 | %.2fx | 1 |\n",
      entries, FormatSize(cap), static_cast<double>(capped.max_bytes) / cap,
      FormatSize(capped.max_bytes), FormatSize(open.max_bytes), capped.over,
      capped.samples, capped.left, capped.evicted, capped.runs, open.left,
      capped.inserts_per_s, open.inserts_per_s, capped.idle_us, open.idle_us,
      capped.during_us, open.during_us, capped.during_us / open.during_us);
}

void Bundles(const Objects& objects, int entries) {
  testing::TempDir dir;
  auto compiler = CudaCompiler::Create(DefaultCudaRoot());
  if (!compiler.ok()) std::exit(1);
  const std::string fp = (*compiler)->toolchain().fingerprint;
  auto store = OpenRocksDbStore(dir.Sub("a"));
  if (!store.ok()) std::exit(1);
  uint64_t object_bytes = 0;
  for (int i = 0; i < entries; ++i) {
    const std::string object =
        Variant(objects.cubin[i % objects.cubin.size()], i);
    object_bytes += object.size();
    (void)Put(**store, object, absl::StrCat("e", i), fp);
  }
  DaemonOptions a;
  a.socket_path = dir.Sub("a.sock");
  a.store_path = dir.Sub("a");
  a.store = *std::move(store);
  a.compiler = *std::move(compiler);
  a.hit_socket = false;
  auto daemon_a = Daemon::Start(std::move(a));
  DaemonOptions b;
  b.socket_path = dir.Sub("b.sock");
  b.store_path = dir.Sub("b");
  b.hit_socket = false;
  auto daemon_b = Daemon::Start(std::move(b));
  if (!daemon_a.ok() || !daemon_b.ok()) {
    std::cerr << "daemons: " << daemon_a.status() << " " << daemon_b.status()
              << "\n";
    std::exit(1);
  }
  const StoreAdmin admin_a = StoreAdmin::Connect(dir.Sub("a.sock"));
  const StoreAdmin admin_b = StoreAdmin::Connect(dir.Sub("b.sock"));
  absl::Time t = absl::Now();
  auto exported = admin_a.Export(dir.Sub("x.jcb"), {});
  const double export_s = absl::ToDoubleSeconds(absl::Now() - t);
  t = absl::Now();
  auto imported = admin_b.Import(dir.Sub("x.jcb"));
  const double import_s = absl::ToDoubleSeconds(absl::Now() - t);
  if (!exported.ok() || !imported.ok()) {
    std::cerr << "bundle: " << exported.status() << " " << imported.status()
              << "\n";
    std::exit(1);
  }
  std::cout << absl::StrFormat(
      "\n### Bundles: export and import of a %d-entry store\n\n"
      "Two daemons in one process, real RocksDB stores; `StoreAdmin::Export` "
      "to a file, then `Import` (which reads the file twice: a full check, "
      "then the upload) into the empty second store. Cubins as above, %s of "
      "objects.\n\n"
      "| step | entries | time | entries/s | MiB/s |\n|---|---|---|---|---|\n"
      "| export | %d | %.2f s | %.0f | %.0f |\n"
      "| import | %d | %.2f s | %.0f | %.0f |\n",
      entries, FormatSize(object_bytes), exported->entries, export_s,
      exported->entries / export_s, exported->bytes / 1048576.0 / export_s,
      imported->imported, import_s, imported->imported / import_s,
      imported->bytes / 1048576.0 / import_s);
  (*daemon_a)->Shutdown(absl::Seconds(1));
  (*daemon_b)->Shutdown(absl::Seconds(1));
}

}  // namespace
}  // namespace jitcache

int main(int argc, char** argv) {
  int entries = 10000;
  int cap_mb = 64;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--entries=")) {
      (void)absl::SimpleAtoi(arg, &entries);
    } else if (absl::ConsumePrefix(&arg, "--cap_mb=")) {
      (void)absl::SimpleAtoi(arg, &cap_mb);
    }
  }
  auto compiler = jitcache::CudaCompiler::Create(jitcache::DefaultCudaRoot());
  if (!compiler.ok()) {
    std::cerr << compiler.status() << "\n";
    return 1;
  }
  const jitcache::Objects objects = jitcache::CompileCorpus(**compiler);
  const std::string fp = (*compiler)->toolchain().fingerprint;
  std::cout << "## Store lifecycle (bench/store_bench.cc)\n\n"
            << "Command: `build/bench/jitcache_store_bench --entries="
            << entries << " --cap_mb=" << cap_mb << "`  \n"
            << "Date: "
            << absl::FormatTime("%Y-%m-%d", absl::Now(), absl::UTCTimeZone())
            << "\n";
  jitcache::CompressionTable(objects, fp);
  jitcache::ChurnTable(objects, fp, entries,
                       static_cast<uint64_t>(cap_mb) << 20);
  jitcache::Bundles(objects, entries);
  return 0;
}
