// A damaged store never keeps the node's cache down: copies of a populated,
// stopped store, each damaged as an operator on a bad day finds it (a
// table truncated or zeroed, the MANIFEST or CURRENT damaged, a table
// missing, an OPTIONS file of garbage, a blob file cut short), are each
// opened by a real daemon. It starts, says what it found and did, counts
// it, and answers every kernel with the bytes it had: a hit where the
// entry survived, a compile where it did not. A store that cannot be
// repaired is moved aside, and no more than three are kept.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/kernels.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

namespace fs = std::filesystem;
using testing::DaemonProcess;

constexpr int kKernels = 6;

class StoreDamage : public ::testing::Test {
 protected:
  // A store holding kKernels cubins, written by a daemon that then stopped
  // (its tables flushed); each kernel's cubin kept as the reference.
  void SetUp() override {
    DaemonProcess daemon(dir_.Sub("d.sock"), dir_.Sub("store"));
    ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
    for (int k = 0; k < kKernels; ++k) {
      const std::string line = Compile(daemon, k, Reference(k));
      ASSERT_TRUE(absl::StartsWith(line, "MISS key")) << line;
    }
    daemon.Stop();
  }

  std::string Reference(int k) { return dir_.Sub(absl::StrCat("ref", k)); }

  std::string Compile(const DaemonProcess& daemon, int k,
                      const std::string& out) {
    const std::string source = dir_.Sub(absl::StrCat("k", k, ".cu"));
    testing::WriteFile(source, kernels::UnrolledKernel(900 + k, 1));
    testing::ProcessResult r = testing::RunProcess(
        {"/usr/bin/env", "JITCACHE_NO_FALLBACK=1", testing::CliBinary(),
         "--socket", daemon.socket(), "compile", source, "--arch", "sm_90",
         "--target", "cubin", "-o", out + ".cubin"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output.substr(0, r.output.find('\n'));
  }

  // A copy of the store at `name`, damaged by `damage` (given the copy).
  std::string DamagedCopy(
      const std::string& name,
      const std::function<void(const std::string&)>& damage) {
    const std::string copy = dir_.Sub(name);
    fs::copy(dir_.Sub("store"), copy, fs::copy_options::recursive);
    chmod(copy.c_str(), 0700);
    damage(copy);
    return copy;
  }

  // The first file in `store` whose name ends with `suffix`.
  static std::string FileEndingWith(const std::string& store,
                                    const std::string& suffix) {
    for (const auto& e : fs::directory_iterator(store)) {
      if (absl::EndsWith(e.path().filename().string(), suffix)) {
        return e.path().string();
      }
    }
    return "";
  }

  static std::vector<std::string> FilesStartingWith(const std::string& store,
                                                    const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(store)) {
      if (absl::StartsWith(e.path().filename().string(), prefix)) {
        out.push_back(e.path().string());
      }
    }
    return out;
  }

  static void Overwrite(const std::string& path, uintmax_t at,
                        const std::string& bytes) {
    std::string text = testing::ReadFile(path);
    text.replace(at, bytes.size(), bytes);
    testing::WriteFile(path, text);
  }

  testing::TempDir dir_;
};

TEST_F(StoreDamage, EveryDamageStartsServesTheSameBytesAndIsCounted) {
  struct Case {
    std::string name;
    std::function<void(const std::string&)> damage;
    bool opens_damaged;  // RocksDB refuses to open it as it is
  };
  const std::vector<Case> cases = {
      {"sst-truncated",
       [](const std::string& s) {
         fs::resize_file(FileEndingWith(s, ".sst"), 10);
       },
       true},
      {"sst-zeroed",
       [](const std::string& s) {
         const std::string sst = FileEndingWith(s, ".sst");
         testing::WriteFile(sst, std::string(fs::file_size(sst), '\0'));
       },
       true},
      {"manifest",
       [](const std::string& s) {
         for (const std::string& m : FilesStartingWith(s, "MANIFEST-")) {
           Overwrite(m, 20, "\xff\xff\xff\xff");
         }
       },
       true},
      {"current",
       [](const std::string& s) {
         const std::string current = s + "/CURRENT";
         Overwrite(current, fs::file_size(current) - 1, "X");
       },
       true},
      {"sst-missing",
       [](const std::string& s) { fs::remove(FileEndingWith(s, ".sst")); },
       true},
      {"options-garbage",
       [](const std::string& s) {
         for (const std::string& o : FilesStartingWith(s, "OPTIONS-")) {
           testing::WriteFile(o, "garbage\n");
         }
       },
       false},
      {"blob-truncated",
       [](const std::string& s) {
         fs::resize_file(FileEndingWith(s, ".blob"), 100);
       },
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string store = DamagedCopy(c.name, c.damage);
    DaemonProcess daemon(dir_.Sub(c.name + ".sock"), store);
    ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
    int hits = 0;
    for (int k = 0; k < kKernels; ++k) {
      const std::string out = dir_.Sub(absl::StrCat(c.name, "-", k));
      const std::string line = Compile(daemon, k, out);
      hits += absl::StartsWith(line, "HIT");
      EXPECT_EQ(testing::ReadFile(out + ".cubin"),
                testing::ReadFile(Reference(k) + ".cubin"))
          << "kernel " << k << ": " << line;
    }
    const DaemonStats stats = testing::StatsOf(daemon.socket());
    EXPECT_EQ(stats.store_recovered + stats.store_quarantined,
              c.opens_damaged ? 1u : 0u)
        << daemon.Log();
    if (c.opens_damaged) {
      EXPECT_TRUE(absl::StrContains(daemon.Log(), "is damaged"))
          << daemon.Log();
    }
    std::printf(
        "%s: %d of %d kernels survived; repaired %llu, moved aside "
        "%llu\n",
        c.name.c_str(), hits, kKernels,
        static_cast<unsigned long long>(stats.store_recovered),
        static_cast<unsigned long long>(stats.store_quarantined));
    daemon.Stop();
  }
}

// jitcached --verify says what a start would do with a damaged store, and
// changes nothing.
TEST_F(StoreDamage, VerifySaysWhatAStartWouldDoAndChangesNothing) {
  const std::string store = DamagedCopy("verified", [](const std::string& s) {
    const std::string current = s + "/CURRENT";
    Overwrite(current, fs::file_size(current) - 1, "X");
  });
  const std::string before = testing::ReadFile(store + "/CURRENT");
  testing::ProcessResult r = testing::RunProcess(
      {testing::DaemonBinary(), "--verify", "--store=" + store});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.output, "a start would repair it"))
      << r.output;
  EXPECT_EQ(testing::ReadFile(store + "/CURRENT"), before);
  EXPECT_FALSE(fs::exists(store + ".damaged-0"));
  // And a start does what it said.
  DaemonProcess daemon(dir_.Sub("verified.sock"), store);
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  EXPECT_EQ(testing::StatsOf(daemon.socket()).store_recovered, 1u);
}

// A store a newer RocksDB wrote is not damage, though this RocksDB reads a
// table format it does not know as corruption: the daemon refuses to
// start, says why, and leaves every file as it was (no repair, nothing
// moved aside).
TEST_F(StoreDamage, AStoreANewerRocksDbWroteIsRefusedAndLeftAsItIs) {
  const std::string store = DamagedCopy("newer", [](const std::string& s) {
    fs::resize_file(FileEndingWith(s, ".sst"), 10);  // unreadable here
    for (const std::string& o : FilesStartingWith(s, "OPTIONS-")) {
      std::string text = testing::ReadFile(o);
      const size_t at = text.find("rocksdb_version=");
      ASSERT_NE(at, std::string::npos) << text;
      text.replace(at, text.find('\n', at) - at, "rocksdb_version=99.0.0");
      testing::WriteFile(o, text);
    }
  });
  const auto listing = [&] {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(store)) {
      files.push_back(
          absl::StrCat(e.path().filename().string(), " ",
                       e.is_regular_file() ? fs::file_size(e.path()) : 0));
    }
    std::sort(files.begin(), files.end());
    return files;
  };
  const std::vector<std::string> before = listing();
  DaemonProcess daemon(dir_.Sub("newer.sock"), store);
  EXPECT_FALSE(daemon.Start().ok());
  EXPECT_TRUE(absl::StrContains(daemon.Log(), "written by RocksDB 99.0.0"))
      << daemon.Log();
  EXPECT_EQ(listing(), before);
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    EXPECT_FALSE(absl::StrContains(e.path().filename().string(), ".damaged-"))
        << e.path();
  }
}

// A store RocksDB cannot repair (its IDENTITY a directory, CURRENT
// damaged) is moved aside and the daemon starts empty, ten times over:
// never more than three damaged stores are kept.
TEST_F(StoreDamage, UnrepairableStoresAreMovedAsideAndTheirNumberBounded) {
  const std::string store = dir_.Sub("store");
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE(round);
    if (round > 0) {
      // The store the last round started: populated again, then damaged.
      fs::remove_all(store);
      fs::copy(dir_.Sub("pristine"), store, fs::copy_options::recursive);
    } else {
      fs::copy(store, dir_.Sub("pristine"), fs::copy_options::recursive);
    }
    chmod(store.c_str(), 0700);
    testing::WriteFile(store + "/CURRENT", "X");
    fs::remove(store + "/IDENTITY");
    fs::create_directory(store + "/IDENTITY");
    DaemonProcess daemon(dir_.Sub("q.sock"), store);
    ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
    const DaemonStats stats = testing::StatsOf(daemon.socket());
    EXPECT_EQ(stats.store_quarantined, 1u) << daemon.Log();
    EXPECT_TRUE(absl::StrContains(daemon.Log(), "moved aside")) << daemon.Log();
    const std::string line = Compile(daemon, 0, dir_.Sub("q0"));
    EXPECT_TRUE(absl::StartsWith(line, "MISS")) << line;
    EXPECT_EQ(testing::ReadFile(dir_.Sub("q0.cubin")),
              testing::ReadFile(Reference(0) + ".cubin"));
    daemon.Stop();
    int kept = 0;
    for (const auto& e : fs::directory_iterator(dir_.path())) {
      if (absl::StartsWith(e.path().filename().string(), "store.damaged-")) {
        ++kept;
        struct stat st;
        ASSERT_EQ(stat(e.path().c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 077, 0u) << "a damaged store stays private";
      }
    }
    EXPECT_EQ(kept, std::min(round + 1, 3));
  }
}

}  // namespace
}  // namespace jitcache
