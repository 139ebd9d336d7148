// What an operator and a developer get from this build: the installed tree
// (`cmake --install`), the systemd units in it, a downstream project built
// against it, and the two .debs installed into a scratch root.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kUnitDir = "/usr/lib/systemd/system";

// Every file and link under `root`, as absolute paths within it.
std::set<std::string> FilesUnder(const std::string& root) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_directory() || entry.is_symlink()) {
      files.insert(entry.path().string().substr(root.size()));
    }
  }
  return files;
}

// One `cmake --install` of this build into a scratch root, shared by the
// tests: DESTDIR keeps the paths the .deb uses (/usr/bin, /etc/default).
class Packaging : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new testing::TempDir();
    root_ = scratch_->Sub("root");
    install_ = RunProcess({"/usr/bin/env", "DESTDIR=" + root_, CMAKE_COMMAND,
                           "--install", JITCACHE_BUILD_DIR});
  }
  static void TearDownTestSuite() { delete scratch_; }
  void SetUp() override { ASSERT_EQ(install_.exit_code, 0) << install_.output; }

  static std::string LibDir() {
    for (const char* dir :
         {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
          "/usr/lib64", "/usr/lib"}) {
      if (access((root_ + dir + "/libjitcache.so").c_str(), F_OK) == 0) {
        return root_ + dir;
      }
    }
    return "";
  }

  static testing::TempDir* scratch_;
  static std::string root_;
  static ProcessResult install_;
};
testing::TempDir* Packaging::scratch_ = nullptr;
std::string Packaging::root_;
ProcessResult Packaging::install_;

TEST_F(Packaging, UnitsPassSystemdAnalyzeVerifyAndScoreAtMostTwo) {
  const std::optional<std::string> analyze =
      testing::FindProgram("systemd-analyze");
  if (!analyze.has_value()) {
    GTEST_SKIP() << "systemd-analyze is not installed (Debian: systemd); "
                    "deploy/install-deps.sh installs it";
  }
  // verify resolves the units' dependencies (sockets.target, ...) and
  // ExecStart in the root: give it the host's targets.
  const std::string units = root_ + kUnitDir;
  for (const auto& entry : fs::directory_iterator("/lib/systemd/system")) {
    if (entry.path().extension() == ".target") {
      fs::copy(entry.path(), units, fs::copy_options::skip_existing);
    }
  }
  ProcessResult verify = RunProcess({*analyze, "verify", "--root=" + root_,
                                     kUnitDir + "/jitcached.socket",
                                     kUnitDir + "/jitcached.service"});
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_FALSE(absl::StrContains(verify.output, "jitcached")) << verify.output;

  ProcessResult security =
      RunProcess({*analyze, "security", "--offline=yes", "--root=" + root_,
                  "--threshold=20", kUnitDir + "/jitcached.service"});
  EXPECT_EQ(security.exit_code, 0) << security.output;
  const std::string marker = "Overall exposure level for jitcached.service: ";
  const size_t at = security.output.find(marker);
  ASSERT_NE(at, std::string::npos) << security.output;
  double exposure = 99;
  ASSERT_TRUE(absl::SimpleAtod(security.output.substr(at + marker.size(), 3),
                               &exposure));
  std::printf("systemd-analyze security: exposure %.1f\n", exposure);
  EXPECT_LE(exposure, 2.0) << security.output;
}

TEST_F(Packaging, ADownstreamCMakeProjectBuildsAgainstTheInstallAndCompiles) {
  testing::TempDir work;
  ProcessResult configure = RunProcess(
      {CMAKE_COMMAND, "-S", JITCACHE_SOURCE_DIR "/tests/downstream", "-B",
       work.Sub("build"), "-DCMAKE_PREFIX_PATH=" + root_ + "/usr",
       "-DCMAKE_BUILD_TYPE=Release"});
  ASSERT_EQ(configure.exit_code, 0) << configure.output;
  ProcessResult build = RunProcess(
      {CMAKE_COMMAND, "--build", work.Sub("build")}, absl::Minutes(10));
  ASSERT_EQ(build.exit_code, 0) << build.output;
  // It links the installed library, not the build's.
  const std::string app = work.Sub("build/app");
  ProcessResult ldd = RunProcess(
      {"/usr/bin/env", "LD_LIBRARY_PATH=" + LibDir(), "/usr/bin/ldd", app});
  EXPECT_TRUE(absl::StrContains(ldd.output, LibDir() + "/libjitcache.so.0"))
      << ldd.output;

  testing::DaemonProcess daemon(work.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  const std::vector<std::string> run = {
      "/usr/bin/env", "LD_LIBRARY_PATH=" + LibDir(), app, daemon.socket()};
  ProcessResult first = RunProcess(run);
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(absl::StartsWith(first.output, "MISS")) << first.output;
  ProcessResult second = RunProcess(run);
  EXPECT_TRUE(absl::StartsWith(second.output, "HIT")) << second.output;

  // The same program through pkg-config.
  const std::optional<std::string> pkg_config =
      testing::FindProgram("pkg-config");
  ASSERT_TRUE(pkg_config.has_value());
  ProcessResult flags =
      RunProcess({"/usr/bin/env", "PKG_CONFIG_PATH=" + LibDir() + "/pkgconfig",
                  *pkg_config, "--cflags", "--libs", "jitcache"});
  ASSERT_EQ(flags.exit_code, 0) << flags.output;
  std::vector<std::string> compile = {
      "/usr/bin/c++", "-std=c++20",
      JITCACHE_SOURCE_DIR "/tests/downstream/main.cc", "-o", work.Sub("app2")};
  for (absl::string_view flag : absl::StrSplit(
           absl::StripAsciiWhitespace(flags.output), ' ', absl::SkipEmpty())) {
    compile.emplace_back(flag);
  }
  ProcessResult built = RunProcess(compile, absl::Minutes(10));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  ProcessResult third =
      RunProcess({"/usr/bin/env", "LD_LIBRARY_PATH=" + LibDir(),
                  work.Sub("app2"), daemon.socket()});
  EXPECT_TRUE(absl::StartsWith(third.output, "HIT")) << third.output;
}

TEST_F(Packaging, TheDebsInstallIntoAScratchRootWithTheInstallLayout) {
  const std::optional<std::string> dpkg = testing::FindProgram("dpkg");
  if (!dpkg.has_value() || geteuid() != 0) {
    GTEST_SKIP() << "needs dpkg and root";
  }
  testing::TempDir work;
  ProcessResult pack = RunProcess(
      {CPACK_COMMAND, "-G", "DEB", "--config",
       JITCACHE_BUILD_DIR "/CPackConfig.cmake", "-B", work.Sub("pkg")},
      absl::Minutes(10));
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  std::vector<std::string> debs;
  for (const auto& entry : fs::directory_iterator(work.Sub("pkg"))) {
    if (entry.path().extension() == ".deb") debs.push_back(entry.path());
  }
  std::sort(debs.begin(), debs.end());
  ASSERT_EQ(debs.size(), 2u) << pack.output;
  EXPECT_TRUE(absl::StrContains(debs[0], "/jitcache_")) << debs[0];
  EXPECT_TRUE(absl::StrContains(debs[1], "/libjitcache-dev_")) << debs[1];

  // A root with an empty dpkg database; the maintainer scripts run outside
  // it (DPKG_ROOT set) and create the service's user there.
  const std::string root = work.Sub("root");
  fs::create_directories(root + "/var/lib/dpkg/info");
  fs::create_directories(root + "/var/lib/dpkg/updates");
  fs::create_directories(root + "/etc");
  testing::WriteFile(root + "/var/lib/dpkg/status", "");
  ProcessResult install =
      RunProcess({*dpkg, "--root=" + root, "--force-script-chrootless",
                  "--force-depends", "-i", debs[0], debs[1]});
  ASSERT_EQ(install.exit_code, 0) << install.output;

  for (const std::string path :
       {"/usr/bin/jitcached", "/usr/bin/jitcache", "/usr/bin/jitcache-full",
        "/usr/lib/systemd/system/jitcached.service",
        "/usr/lib/systemd/system/jitcached.socket",
        "/usr/lib/sysusers.d/jitcache.conf",
        "/usr/lib/tmpfiles.d/jitcache.conf", "/etc/default/jitcached",
        "/usr/include/jitcache/client.h"}) {
    EXPECT_EQ(access((root + path).c_str(), F_OK), 0) << path;
  }
  const std::string lib_dir = LibDir().substr(root_.size());
  for (const std::string name :
       {"/libjitcache.so.0", "/cmake/jitcache/jitcacheConfig.cmake",
        "/pkgconfig/jitcache.pc"}) {
    EXPECT_EQ(access((root + lib_dir + name).c_str(), F_OK), 0) << name;
  }
  // `cmake --install` and the packages lay out the same files.
  std::set<std::string> installed = FilesUnder(root_);
  std::set<std::string> packaged = FilesUnder(root);
  for (const std::string& path : installed) {
    if (absl::StartsWith(path, kUnitDir + "/") &&
        !absl::StrContains(path, "jitcache")) {
      continue;  // the targets the verify test copied in
    }
    EXPECT_TRUE(packaged.count(path)) << path << " is not in the packages";
  }
  EXPECT_TRUE(
      absl::StrContains(testing::ReadFile(root + "/etc/passwd"), "jitcache:"))
      << "postinst did not create the service's user";
  EXPECT_TRUE(
      absl::StrContains(testing::ReadFile(root + "/etc/group"), "jitcache:"));
  ProcessResult status =
      RunProcess({*dpkg, "--root=" + root, "-s", "jitcache"});
  EXPECT_TRUE(absl::StrContains(status.output, "Status: install ok installed"))
      << status.output;
  EXPECT_TRUE(absl::StrContains(status.output, "/etc/default/jitcached"))
      << "not a conffile: " << status.output;
}

}  // namespace
}  // namespace jitcache
