// What an operator and a developer get from this build: the installed tree
// (`cmake --install`), the systemd units in it, a downstream project built
// against it, and the two .debs installed into a scratch root.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// The syscalls `SystemCallFilter=` lines allow: the unit's filters in
// order, each group expanded by systemd-analyze itself.
std::set<std::string> ExpandSyscallGroup(const std::string& analyze,
                                         const std::string& group) {
  std::set<std::string> names;
  ProcessResult listed = RunProcess({analyze, "syscall-filter", group});
  std::vector<std::string> lines = absl::StrSplit(listed.output, '\n');
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string word(absl::StripAsciiWhitespace(lines[i]));
    if (word.empty() || word[0] == '#') continue;
    if (word[0] == '@') {
      std::set<std::string> nested = ExpandSyscallGroup(analyze, word);
      names.insert(nested.begin(), nested.end());
    } else {
      names.insert(word);
    }
  }
  return names;
}

std::set<std::string> AllowedSyscalls(const std::string& analyze,
                                      const std::string& unit_text) {
  std::set<std::string> allowed;
  for (absl::string_view line : absl::StrSplit(unit_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "SystemCallFilter=")) continue;
    const bool deny = absl::ConsumePrefix(&line, "~");
    for (absl::string_view item :
         absl::StrSplit(line, ' ', absl::SkipEmpty())) {
      std::set<std::string> names =
          item[0] == '@' ? ExpandSyscallGroup(analyze, std::string(item))
                         : std::set<std::string>{std::string(item)};
      for (const std::string& name : names) {
        if (deny) {
          allowed.erase(name);
        } else {
          allowed.insert(name);
        }
      }
    }
  }
  return allowed;
}

// No systemd runs here, so the sandbox is checked against what the daemon
// really does: under strace (following its compile workers), it compiles a
// cubin, two LTO-IR objects, links them, and answers stats and ls. Every
// syscall it made must pass the unit's SystemCallFilter, and nothing may ask
// for memory that is writable and executable, or made executable later
// (MemoryDenyWriteExecute=).
TEST_F(Packaging, TheDaemonNeedsNothingItsSandboxForbids) {
  const std::optional<std::string> analyze =
      testing::FindProgram("systemd-analyze");
  const std::optional<std::string> strace = testing::FindProgram("strace");
  if (!analyze.has_value() || !strace.has_value()) {
    GTEST_SKIP() << "needs systemd-analyze and strace (deploy/install-deps.sh "
                    "installs both)";
  }
  const std::set<std::string> allowed = AllowedSyscalls(
      *analyze, testing::ReadFile(root_ + kUnitDir + "/jitcached.service"));
  ASSERT_GT(allowed.size(), 100u);
  ASSERT_TRUE(allowed.count("read") && !allowed.count("reboot"));

  testing::TempDir work;
  const std::string socket = work.Sub("jc.sock");
  const std::string trace = work.Sub("trace");
  pid_t tracer = testing::SpawnProcess(
      {.argv = {*strace, "-f", "-qq", "-o", trace, testing::DaemonBinary(),
                "--socket=" + socket, "--store=" + work.Sub("store")},
       .output_path = work.Sub("log")});
  absl::Time deadline = absl::Now() + absl::Minutes(1);
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {testing::CliBinary(), "--socket", socket});
    return RunProcess(args);
  };
  while (cli({"ping"}).exit_code != 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  testing::WriteFile(work.Sub("k.cu"),
                     "extern \"C\" __global__ void k(int* p) { p[0] = 1; }");
  testing::WriteFile(work.Sub("a.cu"),
                     "extern \"C\" __device__ int f(int x) { return x + 1; }");
  testing::WriteFile(work.Sub("b.cu"),
                     "extern \"C\" __device__ int f(int);\n"
                     "extern \"C\" __global__ void g(int* p) { p[0] = f(1); }");
  EXPECT_EQ(cli({"compile", work.Sub("k.cu"), "--arch", "sm_90", "--target",
                 "cubin", "-o", work.Sub("k.cubin")})
                .exit_code,
            0);
  for (const char* name : {"a", "b"}) {
    ProcessResult lto =
        cli({"compile", work.Sub(absl::StrCat(name, ".cu")), "--arch", "sm_90",
             "--target", "ltoir", "-rdc=true", "-o",
             work.Sub(absl::StrCat(name, ".ltoir"))});
    EXPECT_EQ(lto.exit_code, 0) << lto.output;
  }
  ProcessResult link = cli({"link", work.Sub("a.ltoir"), work.Sub("b.ltoir"),
                            "--arch", "sm_90", "-o", work.Sub("ab.cubin")});
  EXPECT_EQ(link.exit_code, 0) << link.output;
  EXPECT_EQ(cli({"stats"}).exit_code, 0);
  EXPECT_EQ(cli({"ls"}).exit_code, 0);
  // The daemon is strace's child; SIGTERM it as systemd would.
  const std::string children = testing::ReadFile(
      absl::StrCat("/proc/", tracer, "/task/", tracer, "/children"));
  pid_t daemon = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(children), &daemon))
      << children;
  kill(daemon, SIGTERM);
  EXPECT_EQ(testing::WaitProcess(tracer, absl::Minutes(1)), 0);

  std::set<std::string> used;
  std::vector<std::string> executable_memory;
  // RestrictNamespaces= names what unshare(2) may create.
  const std::string unit =
      testing::ReadFile(root_ + kUnitDir + "/jitcached.service");
  std::set<std::string> namespaces;
  for (absl::string_view line : absl::StrSplit(unit, '\n')) {
    if (absl::ConsumePrefix(&line, "RestrictNamespaces=")) {
      for (absl::string_view n : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
        namespaces.insert(std::string(n));
      }
    }
  }
  const std::vector<std::pair<std::string, std::string>> kFlags = {
      {"CLONE_NEWUSER", "user"},    {"CLONE_NEWNS", "mnt"},
      {"CLONE_NEWPID", "pid"},      {"CLONE_NEWNET", "net"},
      {"CLONE_NEWIPC", "ipc"},      {"CLONE_NEWUTS", "uts"},
      {"CLONE_NEWCGROUP", "cgroup"}};
  std::vector<std::string> refused_namespaces;
  int unshares = 0;
  for (absl::string_view line :
       absl::StrSplit(testing::ReadFile(trace), '\n')) {
    // "PID name(args..." ; "PID <... name resumed>..." repeats a name.
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos) continue;
    absl::string_view call =
        absl::StripLeadingAsciiWhitespace(line.substr(space + 1));
    const size_t paren = call.find('(');
    if (paren == absl::string_view::npos || paren == 0 ||
        !std::all_of(call.begin(), call.begin() + paren, [](char c) {
          return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_';
        })) {
      continue;
    }
    used.insert(std::string(call.substr(0, paren)));
    if (absl::StartsWith(call, "unshare(")) {
      ++unshares;
      for (const auto& [flag, name] : kFlags) {
        if (absl::StrContains(call, flag) && !namespaces.count(name)) {
          refused_namespaces.push_back(std::string(call));
        }
      }
    }
    const bool writable_and_executable =
        absl::StrContains(call, "PROT_WRITE|PROT_EXEC") ||
        absl::StrContains(call, "PROT_EXEC|PROT_WRITE");
    const bool made_executable = absl::StartsWith(call, "mprotect(") &&
                                 absl::StrContains(call, "PROT_EXEC");
    if (writable_and_executable || made_executable) {
      executable_memory.emplace_back(call);
    }
  }
  EXPECT_GT(used.size(), 20u);
  std::vector<std::string> forbidden;
  for (const std::string& name : used) {
    if (!allowed.count(name)) forbidden.push_back(name);
  }
  EXPECT_TRUE(forbidden.empty())
      << "syscalls the unit's SystemCallFilter forbids: "
      << absl::StrJoin(forbidden, " ");
  // Every compile entered namespaces of its own, all of them permitted.
  EXPECT_GT(unshares, 0);
  EXPECT_TRUE(refused_namespaces.empty())
      << "RestrictNamespaces= would refuse: "
      << absl::StrJoin(refused_namespaces, "\n");
  EXPECT_TRUE(executable_memory.empty())
      << "MemoryDenyWriteExecute= would refuse: "
      << absl::StrJoin(executable_memory, "\n");
  std::printf("%zu distinct syscalls made, %zu forbidden\n", used.size(),
              forbidden.size());
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

// How CuPy 14 finds the toolkit, in a process that loaded `preload`: the
// loaded libnvrtc.so.13's path as cuda.pathfinder gives it (dlinfo's
// origin and name, links not resolved), then
// dirname(dirname(realpath(path))).
constexpr char kCupyCudaRoot[] = R"(
import ctypes, os
class LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]
libc = ctypes.CDLL(None)
handle = ctypes.CDLL("libnvrtc.so.13", mode=os.RTLD_NOLOAD)._handle
link_map = ctypes.POINTER(LinkMap)()
assert libc.dlinfo(ctypes.c_void_p(handle), 2, ctypes.byref(link_map)) == 0
origin = ctypes.create_string_buffer(4096)
assert libc.dlinfo(ctypes.c_void_p(handle), 6, origin) == 0
path = os.path.join(origin.value.decode(),
                    os.path.basename(link_map.contents.l_name.decode()))
print(os.path.dirname(os.path.dirname(os.path.realpath(path))))
)";

// The drop-ins live in a directory laid out like the CUDA toolkit: a
// program that derives the toolkit from where its loaded NVRTC lives finds
// the toolkit's own files there (CuPy's relocatable compiles need
// lib64/libcudadevrt.a), through the new place and the old one alike; and
// `jitcache preload` prints the line that loads them.
TEST_F(Packaging, TheDropInsLiveInADirectoryShapedLikeTheToolkit) {
  const std::string lib = LibDir();
  ASSERT_FALSE(lib.empty());
  const std::string root = fs::canonical(lib + "/jitcache/cuda").string();
  for (const char* file : {"/lib64/libnvrtc.so.13", "/lib64/libnvJitLink.so.13",
                           "/nvvm/lib64/libnvvm.so.4"}) {
    struct stat st;
    ASSERT_EQ(lstat((root + file).c_str(), &st), 0) << file;
    EXPECT_TRUE(S_ISREG(st.st_mode)) << file << " must be a file, not a link";
  }
  for (const std::string& preload :
       {root + "/lib64/libnvrtc.so.13", lib + "/jitcache/libnvrtc.so.13"}) {
    SCOPED_TRACE(preload);
    ProcessResult derived = RunProcess({"/usr/bin/env", "LD_PRELOAD=" + preload,
                                        "python3", "-c", kCupyCudaRoot});
    ASSERT_EQ(derived.exit_code, 0) << derived.output;
    const std::string cuda(absl::StripAsciiWhitespace(derived.output));
    EXPECT_EQ(cuda, root);
    for (const char* needed :
         {"/lib64/libcudadevrt.a", "/include/cuda.h", "/bin/nvcc"}) {
      EXPECT_TRUE(fs::is_regular_file(cuda + needed)) << cuda << needed;
    }
  }
  // Every entry of the toolkit is there too (links), in nvvm/ as well, and
  // no link leads nowhere.
  const std::string toolkit = fs::canonical("/usr/local/cuda").string();
  for (const std::string& sub : {std::string(""), std::string("/nvvm")}) {
    if (!fs::is_directory(toolkit + sub)) continue;
    for (const auto& entry : fs::directory_iterator(toolkit + sub)) {
      const std::string name = entry.path().filename().string();
      EXPECT_TRUE(fs::exists(root + sub + "/" + name))
          << root << sub << "/" << name << " is missing";
    }
  }
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_symlink()) {
      EXPECT_TRUE(fs::exists(entry.path())) << entry.path() << " leads nowhere";
    }
  }
  ProcessResult line = RunProcess({root_ + "/usr/bin/jitcache", "preload"});
  ASSERT_EQ(line.exit_code, 0) << line.output;
  EXPECT_EQ(line.output,
            absl::StrCat("LD_PRELOAD=", root, "/lib64/libnvrtc.so.13:", root,
                         "/lib64/libnvJitLink.so.13:", root,
                         "/nvvm/lib64/libnvvm.so.4\n"));
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
  // The man pages, the generated ones holding the programs' own --help.
  for (const char* page : {"jitcache.1", "jitcached.1", "jitcache-ptxas.1"}) {
    const std::string path = root + "/usr/share/man/man1/" + page;
    EXPECT_EQ(access(path.c_str(), F_OK), 0) << page;
  }
  EXPECT_TRUE(absl::StrContains(
      testing::ReadFile(root + "/usr/share/man/man1/jitcached.1"),
      "\\-\\-libnvvm"))
      << "jitcached.1 does not hold its --help";
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
