// The store's lifecycle with the real daemon, RocksDB and NVRTC: a cap that
// holds under 2,000 distinct compiles, links that never outlive their
// inputs, admin calls decided by the kernel's peer credentials, and bundles
// shipped from one daemon to another.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/bundle/bundle_file.h"
#include "common/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "jitcache/linker.h"
#include "jitcache/store_admin.h"
#include "jitcache/v1/store.pb.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kernels.h"
#include "tests/testing/synthetic_bundle.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A distinct kernel per `i` carrying 2 KiB of incompressible constants, so
// that entries are ~3 KiB on disk after compression.
std::string Kernel(int i) { return kernels::IncompressibleKernel(i, 512); }

ProgramOptions Sm90() {
  ProgramOptions o;
  o.arch = "sm_90";
  return o;
}

// Bytes of RocksDB's data files (SST, blob, WAL), read from the directory
// by the test, independently of what the daemon reports.
// What du says the directory takes (allocated blocks, every file); the
// last line of its output is the total.
uint64_t DiskUsage(const std::string& dir) {
  const testing::ProcessResult du =
      testing::RunProcess({"/usr/bin/du", "-s", "--block-size=1", dir});
  // (It also complains, and exits 1, when a file goes while it counts.)
  std::vector<std::string> lines =
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(du.output), '\n');
  uint64_t bytes = 0;
  if (!absl::SimpleAtoi(
          lines.back().substr(0, lines.back().find_first_of(" \t")), &bytes)) {
    ADD_FAILURE() << "du " << dir << ": " << du.output;
  }
  return bytes;
}

// Damage: `count` bytes of the file at `path` from `from` on, flipped.
void FlipBytes(const std::string& path, std::streamoff from, int count) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  for (std::streamoff at = from; at < from + count; ++at) {
    file.seekg(at);
    const char c = static_cast<char>(file.get() ^ 0x5a);
    file.seekp(at);
    file.put(c);
  }
}

int Verify(const std::string& store, std::string* output) {
  auto r = testing::RunProcess(
      {testing::DaemonBinary(), "--verify", "--store=" + store});
  *output = r.output;
  return r.exit_code;
}

Served ServedOf(const Client& client, int i) {
  auto code =
      client.Compile(Program(Kernel(i), "k.cu"), Sm90(), CodeType::kCubin);
  EXPECT_TRUE(code.ok()) << code.status();
  EXPECT_TRUE(code.ok() && code->compiled && !code->bytes.empty());
  return code.ok() ? code->served : Served::kLocal;
}

// The store holds every user's objects and logs: the daemon makes it its
// own alone, and will not use one that others can write (they could plant
// what it serves).
TEST(StoreLifecycle, TheStoreIsPrivateAndOneOthersCanWriteIsRefused) {
  testing::TempDir dir;
  const std::string store = dir.Sub("deep/store");
  {
    testing::DaemonProcess daemon(dir.Sub("a.sock"), store);
    ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
    struct stat st;
    ASSERT_EQ(stat(store.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  chmod(store.c_str(), 0777);
  testing::DaemonProcess open(dir.Sub("b.sock"), store);
  EXPECT_FALSE(open.Start().ok());
  EXPECT_THAT(open.Log(), HasSubstr("is writable by others"));
  chmod(store.c_str(), 0755);  // readable: served, with a warning
  testing::DaemonProcess readable(dir.Sub("c.sock"), store);
  EXPECT_TRUE(readable.Start().ok()) << readable.Log();
  EXPECT_THAT(readable.Log(), HasSubstr("is readable by others"));
}

// Bytes flipped in RocksDB's data files (SST blocks and blob files, whose
// own checksums then fail): each entry that cannot be read is a miss,
// counted and removed, compiled again and a hit afterwards; never an error
// on every request.
TEST(StoreLifecycle, DamagedStoreFilesAreMissesThatHeal) {
  testing::TempDir dir;
  const std::string store = dir.Sub("store");
  constexpr int kEntries = 8;
  std::vector<std::string> objects(kEntries);
  {
    testing::DaemonProcess daemon(dir.Sub("a.sock"), store);
    ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
    absl::StatusOr<Client> client =
        Client::Connect({.socket_path = daemon.socket()});
    ASSERT_TRUE(client.ok());
    for (int i = 0; i < kEntries; ++i) {
      auto code = client->Compile(Program(Kernel(2000 + i), "k.cu"), Sm90(),
                                  CodeType::kCubin);
      ASSERT_TRUE(code.ok() && code->compiled) << code.status();
      objects[i] = code->bytes;
    }
  }  // stopped: everything flushed to SST and blob files
  int damaged = 0;
  for (const auto& f : std::filesystem::directory_iterator(store)) {
    const std::string ext = f.path().extension();
    if (ext != ".sst" && ext != ".blob") continue;
    // Past the blob file's header, inside the first records or blocks.
    FlipBytes(f.path().string(), 64, 32);
    ++damaged;
  }
  ASSERT_GT(damaged, 0);

  testing::DaemonProcess daemon(dir.Sub("b.sock"), store);
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});
  ASSERT_TRUE(client.ok());
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kEntries; ++i) {
      auto code = client->Compile(Program(Kernel(2000 + i), "k.cu"), Sm90(),
                                  CodeType::kCubin);
      ASSERT_TRUE(code.ok()) << "round " << round << ": " << code.status();
      EXPECT_EQ(code->bytes, objects[i]);
      if (round == 1) {
        EXPECT_EQ(code->served, Served::kHit) << i;
      }
    }
  }
  absl::StatusOr<DaemonStats> stats = client->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_GT(stats->store_corrupt_removed, 0u);
  EXPECT_GT(stats->compiles, 0u);
  EXPECT_EQ(stats->rejected["data_loss"], 0u);
  EXPECT_EQ(stats->rejected["internal"], 0u);
}

// Damage in the write-ahead log of a daemon that crashed: a normal open
// drops the records logged after it without a word; --verify says so.
TEST(StoreLifecycle, VerifyReportsAWriteAheadLogThatWouldDropRecords) {
  testing::TempDir dir;
  const std::string store = dir.Sub("store");
  {
    testing::DaemonProcess daemon(dir.Sub("a.sock"), store);
    ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
    absl::StatusOr<Client> client =
        Client::Connect({.socket_path = daemon.socket()});
    ASSERT_TRUE(client.ok());
    for (int i = 0; i < 6; ++i) {
      auto code = client->Compile(Program(Kernel(3000 + i), "k.cu"), Sm90(),
                                  CodeType::kCubin);
      ASSERT_TRUE(code.ok() && code->compiled) << code.status();
    }
    daemon.Kill();  // nothing flushed: the records are in the log only
  }
  std::string log;
  for (const auto& f : std::filesystem::directory_iterator(store)) {
    if (f.path().extension() == ".log" && f.file_size() > 4096) {
      log = f.path().string();
    }
  }
  ASSERT_FALSE(log.empty()) << "no write-ahead log with records";
  FlipBytes(log,
            static_cast<std::streamoff>(std::filesystem::file_size(log) / 2),
            16);
  std::string output;
  EXPECT_EQ(Verify(store, &output), 1) << output;
  EXPECT_THAT(output, HasSubstr("write-ahead log"));
}

TEST(StoreLifecycle, TheCapHoldsRecentEntriesHitAndLinksNeverOutliveInputs) {
  testing::TempDir dir;
  constexpr uint64_t kCap = 3 << 20;
  const std::vector<std::string> flags = {"--max_size=3M", "--workers=2"};
  auto daemon = std::make_unique<testing::DaemonProcess>(
      dir.Sub("s.sock"), dir.Sub("store"), flags);
  ASSERT_TRUE(daemon->Start().ok()) << daemon->Log();
  auto client = Client::Connect(
      {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
  ASSERT_TRUE(client.ok());

  // Samples the size as the daemon reports it and as the files are.
  std::atomic<bool> sampling{true};
  uint64_t samples = 0, max_reported = 0, max_du = 0;
  std::thread sampler([&] {
    while (sampling) {
      auto stats = client->Stats();
      if (stats.ok()) max_reported = std::max(max_reported, stats->store_bytes);
      max_du = std::max(max_du, DiskUsage(dir.Sub("store")));
      ++samples;
      absl::SleepFor(absl::Milliseconds(20));
    }
  });
  constexpr int kEntries = 2000;
  std::vector<Client::PrecompileItem> items;
  for (int i = 0; i < kEntries; ++i) {
    items.push_back({Program(Kernel(i), "k.cu"), Sm90(), CodeType::kCubin, {}});
  }
  // In small batches, so that completion order is the order of `items`.
  for (int start = 0; start < kEntries; start += 100) {
    std::vector<Client::PrecompileItem> batch(items.begin() + start,
                                              items.begin() + start + 100);
    for (const auto& outcome : client->Precompile(batch)) {
      ASSERT_TRUE(outcome.code.ok()) << outcome.code.status();
      ASSERT_TRUE(outcome.code->compiled);
    }
  }
  sampling = false;
  sampler.join();
  auto stats = client->Stats();
  ASSERT_TRUE(stats.ok());
  std::cout << samples << " samples; largest store_bytes " << max_reported
            << ", largest du " << max_du << ", cap " << kCap << "; "
            << stats->store_entries << " entries left, "
            << stats->store_evicted_entries << " evicted in "
            << stats->store_eviction_runs << " runs\n";
  EXPECT_GT(samples, 10u);
  // The cap holds the directory as du sees it, whoever measures.
  EXPECT_LE(max_reported, kCap);
  EXPECT_LE(max_du, kCap);
  EXPECT_GT(stats->store_evicted_entries, 0u);
  EXPECT_LT(stats->store_entries, static_cast<uint64_t>(kEntries));
  EXPECT_EQ(stats->store_entries + stats->store_evicted_entries,
            static_cast<uint64_t>(kEntries));

  // The most recent hit; the oldest were evicted, and compile again.
  for (int i = kEntries - 20; i < kEntries; ++i) {
    EXPECT_EQ(ServedOf(*client, i), Served::kHit) << "entry " << i;
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(ServedOf(*client, i), Served::kMiss) << "entry " << i;
  }
  std::string report;
  ASSERT_EQ(daemon->Stop(), 0);
  EXPECT_EQ(Verify(dir.Sub("store"), &report), 0) << report;
  EXPECT_THAT(report, HasSubstr("0 bad objects, 0 bad records, 0 records "
                                "with a missing object"));

  // A link and its two LTO inputs, then enough new entries to push all
  // three out (the store holds ~650 entries); whatever goes, the link never
  // outlives an input.
  daemon = std::make_unique<testing::DaemonProcess>(dir.Sub("s.sock"),
                                                    dir.Sub("store"), flags);
  ASSERT_TRUE(daemon->Start().ok()) << daemon->Log();
  client = Client::Connect(
      {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
  ProgramOptions lto = Sm90();
  lto.extra_options = {"-rdc=true"};
  auto a = client->Compile(
      Program("extern __device__ float f(float);\n"
              "__global__ void k(float* x) { x[0] = f(x[0]); }\n",
              "a.cu"),
      lto, CodeType::kLtoir);
  auto b = client->Compile(
      Program("__device__ float f(float v) { return 2 * v; }\n", "b.cu"), lto,
      CodeType::kLtoir);
  ASSERT_TRUE(a.ok() && b.ok() && a->compiled && b->compiled);
  Linker linker(*client);
  linker.Add(*a).Add(*b);
  LinkerOptions link_options;
  link_options.arch = "sm_90";
  auto linked = linker.Link(link_options, CodeType::kCubin);
  ASSERT_TRUE(linked.ok()) << linked.status();
  ASSERT_TRUE(linked->compiled) << linked->log;
  for (int start = kEntries; start < kEntries + 1000; start += 100) {
    std::vector<Client::PrecompileItem> batch;
    for (int i = start; i < start + 100; ++i) {
      batch.push_back(
          {Program(Kernel(i), "k.cu"), Sm90(), CodeType::kCubin, {}});
    }
    for (const auto& outcome : client->Precompile(batch)) {
      ASSERT_TRUE(outcome.code.ok()) << outcome.code.status();
    }
  }
  StoreAdmin admin = StoreAdmin::Connect(dir.Sub("s.sock"));
  auto show = admin.Show(linked->cache_key.substr(0, 12));
  EXPECT_EQ(show.status().code(), absl::StatusCode::kNotFound)
      << "the link outlived 1000 newer entries";
  ASSERT_EQ(daemon->Stop(), 0);
  EXPECT_EQ(Verify(dir.Sub("store"), &report), 0) << report;
  EXPECT_THAT(report, HasSubstr("0 bad objects, 0 bad records, 0 records "
                                "with a missing object"));
}

// Root runs the test; `nobody` plays another user of the node.
class AdminAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as nobody";
    chmod(dir_.path().c_str(), 0755);
  }
  // Runs jitcache-full as nobody (uid and gid 65534).
  testing::ProcessResult AsNobody(const std::string& socket,
                                  std::vector<std::string> args) {
    args.insert(args.begin(),
                {testing::CliBinary() + "-full", "--socket", socket});
    return testing::RunProcessAs(args, testing::RunAs{65534, 65534, {}});
  }
  void OpenSocket(const std::string& socket) {
    chmod(socket.c_str(), 0666);
    chmod((socket + ".hit").c_str(), 0666);
  }
  testing::TempDir dir_;
};

TEST_F(AdminAccess, AdminCommandsFromAnotherUserArePermissionDenied) {
  testing::DaemonProcess daemon(dir_.Sub("s.sock"), dir_.Sub("store"));
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  OpenSocket(dir_.Sub("s.sock"));
  auto root = testing::RunProcess({testing::CliBinary() + "-full", "--socket",
                                   dir_.Sub("s.sock"), "export", "-o",
                                   dir_.Sub("b.jcb")});
  ASSERT_EQ(root.exit_code, 0) << root.output;
  chmod(dir_.Sub("b.jcb").c_str(), 0644);

  const std::vector<std::vector<std::string>> admin_commands = {
      {"evict", "--to-size", "1M"},
      {"evict", "--older-than", "1d"},
      {"clear"},
      {"config"},
      {"stats", "--zero"},
      {"import", dir_.Sub("b.jcb")}};
  for (const auto& command : admin_commands) {
    auto r = AsNobody(dir_.Sub("s.sock"), command);
    EXPECT_EQ(r.exit_code, 3)
        << absl::StrJoin(command, " ") << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("PERMISSION_DENIED"))
        << absl::StrJoin(command, " ");
    EXPECT_THAT(r.output, HasSubstr("uid 65534 is not one"));
  }
  // What anyone may do still works for nobody, and the store was untouched.
  auto stats = AsNobody(dir_.Sub("s.sock"), {"stats"});
  EXPECT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_THAT(stats.output, HasSubstr("rejected_permission_denied 6"));
  auto ls = AsNobody(dir_.Sub("s.sock"), {"ls"});
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  // Root is an administrator.
  auto config = testing::RunProcess({testing::CliBinary() + "-full", "--socket",
                                     dir_.Sub("s.sock"), "config"});
  EXPECT_EQ(config.exit_code, 0) << config.output;
  // Every setting --help lists is in the listing, under its own name.
  const auto help = testing::RunProcess({testing::DaemonBinary(), "--help"});
  int flags = 0;
  for (absl::string_view line : absl::StrSplit(help.output, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    // "--name (what it does...", not a "--" inside a description.
    const size_t space = line.find(' ');
    if (!absl::StartsWith(line, "--") || space == absl::string_view::npos ||
        line.substr(space, 2) != " (") {
      continue;
    }
    const std::string name(line.substr(2, space - 2));
    if (name == "verify") continue;
    ++flags;
    EXPECT_THAT(config.output, ::testing::ContainsRegex("(^|\n)" + name + " "))
        << name << " is not in jitcache config";
  }
  EXPECT_GT(flags, 30);
  EXPECT_THAT(config.output, ::testing::ContainsRegex("max_size +10737418240 "
                                                      "\\(10.0 GiB\\)"));
}

TEST_F(AdminAccess, MembersOfTheAdminGroupAreAdministrators) {
  // Debian's nogroup (gid 65534) is nobody's group.
  testing::DaemonProcess daemon(dir_.Sub("s.sock"), dir_.Sub("store"),
                                {"--admin_group=nogroup"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  OpenSocket(dir_.Sub("s.sock"));
  auto config = AsNobody(dir_.Sub("s.sock"), {"config"});
  EXPECT_EQ(config.exit_code, 0) << config.output;
  EXPECT_THAT(config.output, HasSubstr("admin_group"));
  EXPECT_THAT(config.output, HasSubstr("nogroup"));
}

TEST(Bundles, ExportOnOneDaemonImportOnAnotherHitsWithIdenticalBytes) {
  testing::TempDir dir;
  testing::DaemonProcess a(dir.Sub("a.sock"), dir.Sub("a"));
  testing::DaemonProcess b(dir.Sub("b.sock"), dir.Sub("b"));
  testing::DaemonProcess c(dir.Sub("c.sock"), dir.Sub("c"));
  ASSERT_TRUE(a.Start().ok()) << a.Log();
  ASSERT_TRUE(b.Start().ok()) << b.Log();
  ASSERT_TRUE(c.Start().ok()) << c.Log();
  auto ca = *Client::Connect({.socket_path = dir.Sub("a.sock")});
  auto cb = *Client::Connect(
      {.socket_path = dir.Sub("b.sock"), .local_fallback = false});

  struct Case {
    Program program;
    CodeType target;
  };
  std::vector<Case> cases;
  for (int i = 0; i < 4; ++i) {
    cases.push_back({Program(Kernel(i), "k.cu"), CodeType::kCubin});
    cases.push_back({Program(Kernel(i), "k.cu"), CodeType::kPtx});
  }
  cases.push_back(
      {Program("__global__ void k() { oops; }", "bad.cu"), CodeType::kPtx});
  std::vector<ObjectCode> originals;
  // Each answer once its key is final: an export while a place's proof
  // still runs may hold the entry under that place's key, which another
  // daemon's callers never ask (a slow machine's race).
  ProgramOptions final_keys = Sm90();
  final_keys.wait_for_proof = true;
  for (const Case& one : cases) {
    auto code = ca.Compile(one.program, final_keys, one.target);
    ASSERT_TRUE(code.ok()) << code.status();
    originals.push_back(*code);
  }
  EXPECT_FALSE(originals.back().compiled);  // a compile error is an entry too

  auto exported = testing::RunProcess({testing::CliBinary() + "-full",
                                       "--socket", dir.Sub("a.sock"), "export",
                                       "-o", dir.Sub("all.jcb")});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr("exported 9 entries"));

  auto imported =
      testing::RunProcess({testing::CliBinary() + "-full", "--socket",
                           dir.Sub("b.sock"), "import", dir.Sub("all.jcb")});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_THAT(imported.output, HasSubstr("imported 9 of 9 entries"));
  for (size_t i = 0; i < cases.size(); ++i) {
    auto code = cb.Compile(cases[i].program, Sm90(), cases[i].target);
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_EQ(code->served, Served::kHit) << "case " << i;
    EXPECT_EQ(code->bytes, originals[i].bytes) << "case " << i;
    EXPECT_EQ(code->compiled, originals[i].compiled);
    EXPECT_EQ(code->log, originals[i].log);
  }
  auto again =
      testing::RunProcess({testing::CliBinary() + "-full", "--socket",
                           dir.Sub("b.sock"), "import", dir.Sub("all.jcb")});
  EXPECT_THAT(again.output, HasSubstr("9 already present"));

  // The same bundle as another toolchain made it: refused, with the reason.
  {
    auto reader = BundleReader::Open(dir.Sub("all.jcb"));
    ASSERT_TRUE(reader.ok());
    v1::BundleHeader header = reader->header();
    header.set_toolchain_fingerprint(std::string(64, 'e'));
    auto writer = BundleWriter::Create(dir.Sub("other.jcb"), header);
    ASSERT_TRUE(writer.ok());
    while (true) {
      auto entry = reader->Next();
      ASSERT_TRUE(entry.ok());
      if (!entry->has_value()) break;
      v1::ActionRecord record;
      ASSERT_TRUE(record.ParseFromString((*entry)->record()));
      record.set_toolchain_fingerprint(std::string(32, '\xee'));
      (*entry)->set_record(record.SerializeAsString());
      ASSERT_TRUE(writer->Add(**entry).ok());
    }
    ASSERT_TRUE(writer->Finish().ok());
  }
  auto other =
      testing::RunProcess({testing::CliBinary() + "-full", "--socket",
                           dir.Sub("c.sock"), "import", dir.Sub("other.jcb")});
  EXPECT_EQ(other.exit_code, 0) << other.output;
  EXPECT_THAT(other.output,
              HasSubstr("imported 0 of 9 entries; refused: 9 other toolchain"));
  EXPECT_THAT(other.output, HasSubstr("built by toolchain eeeeeeee"));

  // A damaged bundle imports nothing at all.
  std::string bytes;
  {
    std::ifstream in(dir.Sub("all.jcb"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() / 2] ^= 0x01;
  std::ofstream(dir.Sub("bad.jcb"), std::ios::binary) << bytes;
  std::ofstream(dir.Sub("cut.jcb"), std::ios::binary)
      << bytes.substr(0, bytes.size() - 40);
  for (const char* file : {"bad.jcb", "cut.jcb"}) {
    auto bad =
        testing::RunProcess({testing::CliBinary() + "-full", "--socket",
                             dir.Sub("c.sock"), "import", dir.Sub(file)});
    EXPECT_EQ(bad.exit_code, 3) << bad.output;
    EXPECT_THAT(bad.output, HasSubstr("nothing was imported")) << file;
  }
  auto cc = *Client::Connect({.socket_path = dir.Sub("c.sock")});
  auto stats = cc.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->store_entries, 0u);
}

TEST(Bundles, AFullDiskDuringImportLeavesASoundStoreAndAServingDaemon) {
  testing::TempDir dir;
  constexpr int kEntries = 120;  // 7.5 MiB of objects
  auto daemon = std::make_unique<testing::DaemonProcess>(dir.Sub("s.sock"),
                                                         dir.Sub("store"));
  // No file of the store may pass 4 MiB: its log, then every write, fails.
  daemon->set_file_size_limit(4 << 20);
  ASSERT_TRUE(daemon->Start().ok()) << daemon->Log();
  auto client = *Client::Connect(
      {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
  auto info = client.Ping();
  ASSERT_TRUE(info.ok());
  ASSERT_TRUE(testing::WriteSyntheticBundle(
                  dir.Sub("big.jcb"), info->toolchain_fingerprint, kEntries)
                  .ok());

  auto full =
      testing::RunProcess({testing::CliBinary() + "-full", "--socket",
                           dir.Sub("s.sock"), "import", dir.Sub("big.jcb")});
  EXPECT_EQ(full.exit_code, 3) << full.output;
  EXPECT_THAT(full.output, HasSubstr("imported whole"));
  // The daemon is still there and still answers (a compile it cannot store
  // is still the right answer).
  ASSERT_TRUE(client.Ping().ok()) << daemon->Log();
  auto code =
      client.Compile(Program(Kernel(1), "k.cu"), Sm90(), CodeType::kCubin);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_TRUE(code->compiled);
  EXPECT_EQ(daemon->Stop(), 0) << daemon->Log();

  std::string report;
  EXPECT_EQ(Verify(dir.Sub("store"), &report), 0) << report;
  EXPECT_THAT(report, HasSubstr("0 bad objects, 0 bad records, 0 records "
                                "with a missing object"));

  // With room again, the same bundle completes the store: what the failed
  // import wrote is whole and counted as present.
  daemon = std::make_unique<testing::DaemonProcess>(dir.Sub("s.sock"),
                                                    dir.Sub("store"));
  ASSERT_TRUE(daemon->Start().ok()) << daemon->Log();
  auto again =
      StoreAdmin::Connect(dir.Sub("s.sock")).Import(dir.Sub("big.jcb"));
  ASSERT_TRUE(again.ok()) << again.status();
  std::cout << "after the full disk: " << again->already_present
            << " entries were in, " << again->imported << " imported now\n";
  EXPECT_GT(again->already_present, 0u);  // the failure came mid-import
  EXPECT_GT(again->imported, 0u);
  EXPECT_EQ(again->imported + again->already_present,
            static_cast<uint64_t>(kEntries));
  EXPECT_EQ(again->corrupt, 0u);
  ASSERT_EQ(daemon->Stop(), 0);
  EXPECT_EQ(Verify(dir.Sub("store"), &report), 0) << report;
}

TEST(Bundles, PrecompileExportsWhatItCompiled) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"), dir.Sub("store"));
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  for (int i = 0; i < 3; ++i) {
    std::ofstream(dir.Sub(absl::StrCat("k", i, ".cu"))) << Kernel(100 + i);
  }
  // An unrelated entry, which the bundle must not carry.
  auto client = *Client::Connect({.socket_path = dir.Sub("s.sock")});
  ASSERT_TRUE(
      client.Compile(Program(Kernel(7), "x.cu"), Sm90(), CodeType::kPtx).ok());
  std::ofstream(dir.Sub("m.manifest"))
      << "k0.cu --target cubin --arch sm_80,sm_90\nk1.cu --arch sm_90\n"
         "k2.cu --target ltoir --arch sm_90\n";
  auto r = testing::RunProcess(
      {testing::CliBinary() + "-full", "--socket", dir.Sub("s.sock"),
       "precompile", dir.Sub("m.manifest"), "--export", dir.Sub("pkg.jcb")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("exported 4 entries"));
  auto reader = BundleReader::Open(dir.Sub("pkg.jcb"));
  ASSERT_TRUE(reader.ok());
  int entries = 0;
  while (true) {
    auto entry = reader->Next();
    ASSERT_TRUE(entry.ok()) << entry.status();
    if (!entry->has_value()) break;
    EXPECT_TRUE(CheckBundleEntry(**entry).ok());
    ++entries;
  }
  EXPECT_EQ(entries, 4);
  EXPECT_THAT(r.output, Not(HasSubstr("FAILED")));
}

}  // namespace
}  // namespace jitcache
