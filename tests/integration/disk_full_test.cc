// A full file system under the store, with and without a cap, and a daemon
// started on one: no crash, hits served, misses answered (not kept,
// counted), and writes resume by themselves once there is room again.
// Needs a tmpfs of its own: mounting one needs root (or CAP_SYS_ADMIN);
// elsewhere the tests skip and say why.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "jitcache/store_admin.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kernels.h"
#include "tests/testing/synthetic_bundle.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A tmpfs of `mib` MiB at `path`, unmounted on destruction.
class Tmpfs {
 public:
  Tmpfs(std::string path, int mib) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    const std::string data = absl::StrCat("size=", mib, "m,mode=0755");
    if (mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
              data.c_str()) == 0) {
      mounted_ = true;
    } else {
      error_ = std::strerror(errno);
    }
  }
  ~Tmpfs() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

#define MOUNT_TMPFS_OR_SKIP(var, path, mib)                                \
  Tmpfs var(path, mib);                                                    \
  if (!var.mounted()) {                                                    \
    GTEST_SKIP() << "cannot mount a tmpfs (" << var.error()                \
                 << "): these tests need root or CAP_SYS_ADMIN to fill a " \
                    "file system of their own";                            \
  }

// Writes `path` until the file system has no block left; returns the bytes
// written.
uint64_t FillUp(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  EXPECT_GE(fd, 0) << std::strerror(errno);
  if (fd < 0) return 0;
  uint64_t total = 0;
  for (size_t chunk : {size_t{1} << 20, size_t{4096}, size_t{1}}) {
    const std::string bytes(chunk, 'x');
    while (true) {
      const ssize_t n = write(fd, bytes.data(), bytes.size());
      if (n <= 0) {
        EXPECT_EQ(errno, ENOSPC) << std::strerror(errno);
        break;
      }
      total += static_cast<uint64_t>(n);
    }
  }
  close(fd);
  return total;
}

// A distinct kernel per `i` with 64 KiB of incompressible constants, so
// that a few entries pass what the store's logs hold in advance.
std::string BigKernel(int i) {
  return kernels::IncompressibleKernel(i, 16384, "__device__");
}

class DiskFull : public ::testing::Test {
 protected:
  absl::StatusOr<ObjectCode> Compile(const Client& client, int i) {
    ProgramOptions options;
    // One write at a time, as this test means (a miss answered before its
    // place proof leaves the proof's write to overlap the next request's:
    // with the disk full, RocksDB's Resume racing such writes ends the
    // daemon with an assertion, which issue 38's work is to survive).
    options.wait_for_proof = true;
    options.arch = "sm_90";
    return client.Compile(Program(BigKernel(i), "big.cu"), options,
                          CodeType::kCubin);
  }

  // The compile of kernel `i` is answered with an object, however served.
  Served ExpectAnswered(const Client& client, int i) {
    absl::StatusOr<ObjectCode> code = Compile(client, i);
    EXPECT_TRUE(code.ok()) << code.status();
    if (!code.ok()) return Served::kLocal;
    EXPECT_TRUE(code->compiled) << code->log;
    EXPECT_FALSE(code->bytes.empty());
    return code->served;
  }

  // Compiles new kernels from `next` on until one is kept (its second
  // request a hit), for at most `limit`; the number compiled, 0 if none was
  // kept in time.
  int UntilOneIsKept(const Client& client, int next, absl::Duration limit) {
    const absl::Time deadline = absl::Now() + limit;
    for (int tries = 1; absl::Now() < deadline; ++tries, ++next) {
      EXPECT_NE(ExpectAnswered(client, next), Served::kLocal);
      if (ExpectAnswered(client, next) == Served::kHit) return tries;
      absl::SleepFor(absl::Milliseconds(500));
    }
    return 0;
  }

  // Relocatable PTX of a kernel and the function it calls, made by the
  // daemon, written to `dir`/caller.ptx and `dir`/callee.ptx with a comment
  // line after it: bytes the store does not hold, so that a link of them
  // sends them with its request.
  void MakeLinkInputs(const Client& client, const std::string& dir) {
    ProgramOptions options;
    options.arch = "compute_90";
    options.relocatable_device_code = true;
    options.wait_for_proof = true;
    for (const auto& [file, source] :
         {std::pair<std::string, std::string>{
              "caller",
              "extern __device__ float f(float);\n"
              "extern \"C\" __global__ void k(float* x) "
              "{ x[threadIdx.x] = f(x[threadIdx.x]); }\n"},
          {"callee", "__device__ float f(float v) { return v * 3.0f; }\n"}}) {
      absl::StatusOr<ObjectCode> code = client.Compile(
          Program(source, file + ".cu"), options, CodeType::kPtx);
      ASSERT_TRUE(code.ok()) << code.status();
      testing::WriteFile(
          dir + "/" + file + ".ptx",
          std::string(code->bytes.view()) + "\n// not in the store\n");
    }
  }

  // The two inputs linked by nvJitLink into `out`: through jitcache's
  // libnvJitLink.so.13 against the daemon at `socket`, or the real one.
  testing::ProcessResult Link(const std::string& dir, const std::string& out,
                              const std::string& socket) {
    std::filesystem::create_directories(out);
    std::vector<std::string> argv = {"/usr/bin/env"};
    if (!socket.empty()) {
      argv.push_back(std::string("LD_LIBRARY_PATH=") + JITCACHE_NVJITLINK_DIR);
      argv.push_back("JITCACHE_SOCKET=" + socket);
      argv.push_back("JITCACHE_NVJITLINK_VERBOSE=1");
    }
    for (const char* step : {JITCACHE_NVJITLINK_CASE, out.c_str(), "-o",
                             "-arch=sm_90", "-a", "2", "caller.ptx"}) {
      argv.push_back(step);
    }
    argv.push_back(dir + "/caller.ptx");
    for (const char* step : {"-a", "2", "callee.ptx"}) argv.push_back(step);
    argv.push_back(dir + "/callee.ptx");
    argv.push_back("-c");
    return testing::RunProcess(argv);
  }

  int Verify(const std::string& store, std::string* output) {
    auto r = testing::RunProcess(
        {testing::DaemonBinary(), "--verify", "--store=" + store});
    *output = r.output;
    return r.exit_code;
  }
};

// The full-disk sequence against a daemon started with `flags`, on a
// tmpfs of `mib` MiB. With `import_mib`, an import of that many MiB
// follows the filling: enough to pass what the store's logs and memtables
// hold in advance.
struct FullDiskCase {
  const char* name;
  std::vector<std::string> flags;
  int mib;
  int import_mib;
};

void PrintTo(const FullDiskCase& c, std::ostream* os) { *os << c.name; }

class DiskFullWhileServing
    : public DiskFull,
      public ::testing::WithParamInterface<FullDiskCase> {};

TEST_P(DiskFullWhileServing, TheDaemonServesHitsAnswersMissesAndResumes) {
  testing::TempDir dir;
  MOUNT_TMPFS_OR_SKIP(fs, dir.Sub("fs"), GetParam().mib);
  const std::string store = dir.Sub("fs/store");
  testing::DaemonProcess daemon(dir.Sub("s.sock"), store, GetParam().flags);
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  auto client = Client::Connect(
      {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
  ASSERT_TRUE(client.ok()) << client.status();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ExpectAnswered(*client, i), Served::kMiss);
  }

  const uint64_t filled = FillUp(dir.Sub("fs/filler"));
  std::cout << "filled the file system with " << filled << " bytes\n";
  if (GetParam().import_mib > 0) {
    auto info = client->Ping();
    ASSERT_TRUE(info.ok());
    ASSERT_TRUE(testing::WriteSyntheticBundle(dir.Sub("big.jcb"),
                                              info->toolchain_fingerprint,
                                              GetParam().import_mib, 1 << 20)
                    .ok());
    auto import =
        StoreAdmin::Connect(dir.Sub("s.sock")).Import(dir.Sub("big.jcb"));
    EXPECT_FALSE(import.ok() && import->imported == static_cast<uint64_t>(
                                                        GetParam().import_mib))
        << "the whole import fit on a full disk";
  }
  // Misses are compiled and answered, though nothing can be kept.
  constexpr int kWhileFull = 8;
  for (int i = 100; i < 100 + kWhileFull; ++i) {
    EXPECT_NE(ExpectAnswered(*client, i), Served::kLocal) << daemon.Log();
  }
  ASSERT_TRUE(daemon.running());
  ASSERT_TRUE(client->Ping().ok()) << daemon.Log();
  // What the store held is still served.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ExpectAnswered(*client, i), Served::kHit) << daemon.Log();
  }
  auto stats = client->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::cout << "while full: " << stats->store_write_failures
            << " store writes failed\n";
  EXPECT_GT(stats->store_write_failures, 0u);

  // Room again: writes resume without a restart.
  std::filesystem::remove(dir.Sub("fs/filler"));
  const absl::Time freed = absl::Now();
  const int compiled = UntilOneIsKept(*client, 200, absl::Minutes(2));
  EXPECT_GT(compiled, 0) << "nothing was kept two minutes after space "
                            "returned\n"
                         << daemon.Log();
  std::cout << "kept again " << (absl::Now() - freed) << " after space "
            << "returned (" << compiled << " compiles)\n";
  // Everything answered while full can be kept now.
  for (int i = 100; i < 100 + kWhileFull; ++i) ExpectAnswered(*client, i);
  for (int i = 100; i < 100 + kWhileFull; ++i) {
    EXPECT_EQ(ExpectAnswered(*client, i), Served::kHit);
  }
  EXPECT_THAT(daemon.Log(), HasSubstr("the store is written again"));
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();

  std::string report;
  EXPECT_EQ(Verify(store, &report), 0) << report;
  EXPECT_THAT(report, HasSubstr("0 bad objects, 0 bad records"));
}

INSTANTIATE_TEST_SUITE_P(
    CapOrNot, DiskFullWhileServing,
    ::testing::Values(
        FullDiskCase{"WithACap", {"--max_size=12M"}, 16, 0},
        // Without a cap the store's buffers follow the file
        // system's size (3 MiB here): an import of 80 MiB
        // passes them. Writes resume once a flush fits.
        FullDiskCase{"WithoutACap", {"--max_size=0"}, 192, 80},
        // A small file system without a cap: the store's
        // buffers follow its size, so writes resume.
        FullDiskCase{"WithoutACapOnASmallFileSystem", {"--max_size=0"}, 20, 0}),
    [](const ::testing::TestParamInfo<FullDiskCase>& param_info) {
      return std::string(param_info.param.name);
    });

// A link whose inputs come with it, asked while nothing can be written:
// the daemon links it all the same (the inputs it could not keep are asked
// for again by a later link), with the real nvJitLink's answer; a failed
// write never fails a request.
TEST_F(DiskFull, ALinkWhoseInputsCannotBeKeptIsLinkedAllTheSame) {
  testing::TempDir dir;
  MOUNT_TMPFS_OR_SKIP(fs, dir.Sub("fs"), 16);
  testing::DaemonProcess daemon(dir.Sub("s.sock"), dir.Sub("fs/store"),
                                {"--max_size=12M"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  auto client = Client::Connect(
      {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
  ASSERT_TRUE(client.ok()) << client.status();
  MakeLinkInputs(*client, dir.path());
  FillUp(dir.Sub("fs/filler"));
  // Whatever the store still buffers is spent first.
  for (int i = 0; i < 4; ++i) ExpectAnswered(*client, 300 + i);

  const testing::ProcessResult real =
      Link(dir.path(), dir.Sub("link-real"), "");
  ASSERT_EQ(real.exit_code, 0) << real.output;
  const testing::ProcessResult linked =
      Link(dir.path(), dir.Sub("link-ours"), daemon.socket());
  ASSERT_EQ(linked.exit_code, 0) << linked.output;
  EXPECT_THAT(linked.output, Not(HasSubstr("the daemon refused")))
      << daemon.Log();
  EXPECT_THAT(daemon.Log(), HasSubstr("] linked ")) << linked.output;
  for (const char* file : {"report", "linked.cubin"}) {
    EXPECT_EQ(testing::ReadFile(dir.Sub(std::string("link-real/") + file)),
              testing::ReadFile(dir.Sub(std::string("link-ours/") + file)))
        << file;
  }
  auto stats = client->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GT(stats->store_write_failures, 0u);
  EXPECT_TRUE(daemon.running()) << daemon.Log();
}

TEST_F(DiskFull, TheDaemonStartsOnAFullDiskAndWritesOnceThereIsRoom) {
  testing::TempDir dir;
  MOUNT_TMPFS_OR_SKIP(fs, dir.Sub("fs"), 16);
  const std::string store = dir.Sub("fs/store");
  const std::vector<std::string> flags = {"--max_size=12M"};
  auto daemon =
      std::make_unique<testing::DaemonProcess>(dir.Sub("s.sock"), store, flags);
  ASSERT_TRUE(daemon->Start().ok()) << daemon->Log();
  {
    auto client = Client::Connect(
        {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
    ASSERT_TRUE(client.ok());
    for (int i = 0; i < 3; ++i) ExpectAnswered(*client, i);
  }
  ASSERT_EQ(daemon->Stop(), 0) << daemon->Log();
  FillUp(dir.Sub("fs/filler"));

  daemon =
      std::make_unique<testing::DaemonProcess>(dir.Sub("s.sock"), store, flags);
  ASSERT_TRUE(daemon->Start().ok()) << daemon->Log();
  EXPECT_THAT(daemon->Log(), HasSubstr("read-only"));
  auto client = Client::Connect(
      {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
  ASSERT_TRUE(client.ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ExpectAnswered(*client, i), Served::kHit) << daemon->Log();
  }
  EXPECT_EQ(ExpectAnswered(*client, 50), Served::kMiss);
  EXPECT_EQ(ExpectAnswered(*client, 50), Served::kMiss);  // not kept
  auto stats = client->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_GT(stats->store_write_failures, 0u);

  std::filesystem::remove(dir.Sub("fs/filler"));
  EXPECT_GT(UntilOneIsKept(*client, 60, absl::Minutes(2)), 0) << daemon->Log();
  EXPECT_THAT(daemon->Log(), HasSubstr("opened for writing"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ExpectAnswered(*client, i), Served::kHit);
  }
  EXPECT_EQ(daemon->Stop(), 0) << daemon->Log();
  std::string report;
  EXPECT_EQ(Verify(store, &report), 0) << report;
}

}  // namespace
}  // namespace jitcache
