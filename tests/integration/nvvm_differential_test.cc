// libnvvm.so.4 against the real libNVVM. One C program
// (tests/testing/nvvm_case.c) drives a program and prints every call's
// result and every read (with what it wrote past the size). For each case
// it runs twice with the real libNVVM (the oracle, and a check that the
// oracle itself does not vary), then with ours: a miss, in a new process a
// hit, and with no daemon at all. All must print the same report. The real
// libNVVM is the toolkit's, or the nvidia-nvvm wheel's of the toolkit's
// version where the toolkit has none (tests/oracles/fetch_libnvvm.py); the
// daemon runs that very file (--libnvvm).
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::ProcessResult;

std::string CudaRoot() {
  const char* home = std::getenv("CUDA_HOME");
  return home != nullptr && *home != '\0' ? home : "/usr/local/cuda";
}

// The real libNVVM's path (fetched once for the build).
const std::string& RealLibNvvm() {
  static const std::string* path = [] {
    ProcessResult fetched =
        testing::RunProcess({"/usr/bin/env", "python3", JITCACHE_FETCH_LIBNVVM,
                             CudaRoot(), JITCACHE_ORACLE_DIR},
                            absl::Minutes(10));
    std::string out(absl::StripAsciiWhitespace(fetched.output));
    if (fetched.exit_code != 0) out.clear();
    return new std::string(out.substr(out.rfind('\n') + 1));
  }();
  return *path;
}

constexpr const char* kHeader =
    "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-"
    "i64:64:64-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-"
    "v128:128:128-n16:32:64\"\n"
    "target triple = \"nvptx64-nvidia-cuda\"\n";
constexpr const char* kVersion =
    "!nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0, i32 3, i32 2}\n";

struct Case {
  std::string name;
  std::vector<std::string> steps;
  // The hit process is answered by the daemon alone (the real libNVVM is
  // never loaded). Not so where the real one must answer: a read before any
  // compile, a NULL argument, the error strings.
  bool daemon_answers = true;
  std::vector<std::string> env = {};
  // What the process printed (stdout and stderr, jitcache's own lines left
  // out) is the real libNVVM's too: LLVM's options print, and some end the
  // process.
  bool same_output = false;
};

// A process's output without jitcache's own lines (JITCACHE_NVVM_VERBOSE's,
// and the driver's note on which libNVVM it loaded).
std::string LibraryOutput(const std::string& output) {
  std::vector<std::string> kept;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::StartsWith(line, "jitcache libnvvm.so.4:") ||
        absl::StartsWith(line, "real libNVVM ")) {
      continue;
    }
    kept.emplace_back(line);
  }
  return absl::StrJoin(kept, "\n");
}

class NvvmDifferential : public ::testing::Test {
 protected:
  void SetUp() override {
    real_ = RealLibNvvm();
    ASSERT_FALSE(real_.empty()) << "no real libNVVM to compare with";
    daemon_.emplace(dir_.Sub("jc.sock"),
                    ":memory:", std::vector<std::string>{"--libnvvm=" + real_});
    ASSERT_TRUE(daemon_->Start().ok()) << daemon_->Log();
    testing::WriteFile(
        In("kernel.ll"),
        absl::StrCat(kHeader,
                     "define void @k(float* %p) {\n"
                     "  store float 1.0, float* %p\n  ret void\n}\n"
                     "!nvvm.annotations = !{!0}\n"
                     "!0 = !{void (float*)* @k, !\"kernel\", i32 1}\n",
                     kVersion));
    testing::WriteFile(
        In("sin.ll"),
        absl::StrCat(kHeader,
                     "declare float @__nv_sinf(float)\n"
                     "define void @s(float* %p) {\n"
                     "  %v = load float, float* %p\n"
                     "  %r = call float @__nv_sinf(float %v)\n"
                     "  store float %r, float* %p\n  ret void\n}\n"
                     "!nvvm.annotations = !{!0}\n"
                     "!0 = !{void (float*)* @s, !\"kernel\", i32 1}\n",
                     kVersion));
    testing::WriteFile(In("garbage"), "this is not NVVM IR\n");
    // An IR version libNVVM 13.0 refuses unless NVVM_IR_VER_CHK=0.
    std::string old = testing::ReadFile(In("kernel.ll"));
    old.replace(old.find("i32 2, i32 0, i32 3, i32 2"), 26,
                "i32 1, i32 0, i32 3, i32 2");
    testing::WriteFile(In("old-version.ll"), old);
    // A loop, which LLVM's unroll options change.
    testing::WriteFile(
        In("loop.ll"),
        absl::StrCat(kHeader,
                     "define void @loop(float* %p, i32 %n) {\n"
                     "entry:\n  br label %body\n"
                     "body:\n"
                     "  %i = phi i32 [ 0, %entry ], [ %next, %body ]\n"
                     "  %a = getelementptr float, float* %p, i32 %i\n"
                     "  %v = load float, float* %a\n"
                     "  %w = fmul float %v, 2.0\n"
                     "  store float %w, float* %a\n"
                     "  %next = add i32 %i, 1\n"
                     "  %done = icmp eq i32 %next, %n\n"
                     "  br i1 %done, label %exit, label %body\n"
                     "exit:\n  ret void\n}\n"
                     "!nvvm.annotations = !{!0}\n"
                     "!0 = !{void (float*, i32)* @loop, !\"kernel\", i32 1}\n",
                     kVersion));
  }

  std::string In(const std::string& file) const { return dir_.Sub(file); }

  // The driver with `lib`, writing REPORT; ours with the daemon at
  // `socket`.
  ProcessResult Run(const std::string& report, const Case& c, bool ours,
                    const std::string& socket = "") {
    std::vector<std::string> argv = {"/usr/bin/env"};
    if (ours) {
      argv.push_back("JITCACHE_SOCKET=" + socket);
      argv.push_back("JITCACHE_REAL_NVVM=" + real_);
      argv.push_back("JITCACHE_NVVM_VERBOSE=1");
      argv.push_back("CASE_REAL_LIBNVVM=" + real_);
    }
    argv.insert(argv.end(), c.env.begin(), c.env.end());
    argv.push_back(JITCACHE_NVVM_CASE);
    argv.push_back(ours ? std::string(JITCACHE_NVVM_DIR) + "/libnvvm.so.4"
                        : real_);
    argv.push_back(dir_.Sub(report));
    argv.insert(argv.end(), c.steps.begin(), c.steps.end());
    return testing::RunProcess(argv, absl::Minutes(5));
  }

  std::string Report(const std::string& report) const {
    return testing::ReadFile(dir_.Sub(report));
  }

  testing::TempDir dir_;
  std::string real_;
  std::optional<testing::DaemonProcess> daemon_;
};

std::vector<std::string> Steps(std::initializer_list<std::string> steps) {
  return steps;
}

// A program of one module, `file`, compiled with `options` (and -arch),
// read and destroyed.
std::vector<std::string> Compiled(const std::string& file,
                                  std::vector<std::string> options) {
  options.push_back("-arch=compute_90");
  std::vector<std::string> steps = {"-c", "-a", "m",
                                    file, "-C", std::to_string(options.size())};
  steps.insert(steps.end(), options.begin(), options.end());
  steps.insert(steps.end(), {"-r", "-d"});
  return steps;
}

std::vector<std::string> Join(
    std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> steps;
  for (const std::vector<std::string>& part : parts) {
    steps.insert(steps.end(), part.begin(), part.end());
  }
  return steps;
}

TEST_F(NvvmDifferential, EveryCaseMatchesTheRealLibNvvmMissHitAndNoDaemon) {
  const std::string kernel = In("kernel.ll"), sin = In("sin.ll"),
                    garbage = In("garbage");
  const std::string libdevice = CudaRoot() + "/nvvm/libdevice/libdevice.10.bc";
  const std::string old_ir = In("old-version.ll"), loop = In("loop.ll");
  const std::vector<Case> cases = {
      {"plain", Steps({"-c", "-a", "k", kernel, "-C", "1", "-arch=compute_90",
                       "-r", "-d"})},
      {"lto", Steps({"-c", "-a", "k", kernel, "-C", "3", "-opt=3",
                     "-arch=compute_90a", "-gen-lto", "-r", "-d"})},
      // numba-cuda's sequence: a NULL-named module, a verify, libdevice
      // added lazily, the compile, every read.
      {"numba", Steps({"-c", "-a", "@null", sin, "-V", "2", "-opt=3",
                       "-arch=compute_90a", "-l", "@null", libdevice, "-C", "2",
                       "-opt=3", "-arch=compute_90a", "-r", "-d"})},
      {"numba-lto",
       Steps({"-c", "-a", "@null", sin, "-V", "3", "-opt=3",
              "-arch=compute_90a", "-gen-lto", "-l", "@null", libdevice, "-C",
              "3", "-opt=3", "-arch=compute_90a", "-gen-lto", "-r"})},
      {"debug", Steps({"-c", "-a", "k", kernel, "-C", "3", "-opt=0", "-g",
                       "-arch=compute_90", "-r"})},
      {"fastmath", Steps({"-c", "-a", "@null", sin, "-l", "@null", libdevice,
                          "-C", "6", "-arch=compute_90", "-ftz=1", "-fma=1",
                          "-prec-div=0", "-prec-sqrt=0", "-opt=3", "-r"})},
      {"unknown-option", Steps({"-c", "-a", "k", kernel, "-C", "2",
                                "-arch=compute_90", "-bogus", "-r"})},
      {"garbage", Steps({"-c", "-a", "g", garbage, "-C", "0", "-r"})},
      // The same bytes under another name, and under none: the log names
      // the module, so each is its own answer.
      {"garbage-renamed",
       Steps({"-c", "-a", "other", garbage, "-C", "0", "-r"})},
      {"garbage-unnamed",
       Steps({"-c", "-a", "@null", garbage, "-C", "0", "-r"})},
      {"verify-garbage-then-compile",
       Steps({"-c", "-a", "g", garbage, "-V", "0", "-r", "-C", "0", "-r"})},
      {"no-module", Steps({"-c", "-C", "0", "-r", "-V", "0", "-r"})},
      {"compile-twice-then-add",
       Steps({"-c", "-a", "k", kernel, "-C", "1", "-arch=compute_90", "-r",
              "-C", "1", "-arch=compute_90", "-r", "-a", "k2", kernel, "-C",
              "1", "-arch=compute_90", "-r"})},
      {"empty-module", Steps({"-c", "-a", "e", "@empty", "-a", "k", kernel,
                              "-C", "1", "-arch=compute_90", "-r"})},
      {"truncated-module", Steps({"-c", "-a", "k", kernel + ":200", "-C", "1",
                                  "-arch=compute_90", "-r"})},
      {"versions", Steps({"-v"})},
      {"read-before-compile",
       Steps({"-c", "-a", "k", kernel, "-r", "-C", "1", "-arch=compute_90",
              "-r"}),
       false},
      {"null-buffer",
       Steps({"-c", "-a", "k", "@null", "-a", "k", kernel, "-C", "1",
              "-arch=compute_90", "-r"}),
       false},
      {"null-option",
       Steps({"-c", "-a", "k", kernel, "-C", "2", "-arch=compute_90", "@null",
              "-r"}),
       false},
      {"error-strings", Steps({"-e"}), false},
      {"old-ir-version", Steps({"-c", "-a", "k", In("old-version.ll"), "-C",
                                "1", "-arch=compute_90", "-r"})},
      // The environment libNVVM reads: such a caller compiles itself (the
      // daemon's answer, without it, is the refusal above).
      {"ir-version-check-off",
       Steps({"-c", "-a", "k", In("old-version.ll"), "-C", "1",
              "-arch=compute_90", "-r"}),
       false,
       {"NVVM_IR_VER_CHK=0"}},
      // ... which libNVVM reads at every compile: set after a first compile
      // (refused), it decides the second (taken); unset, the third is
      // refused again.
      {"ir-version-check-set-between-compiles",
       Join({Compiled(old_ir, {}),
             {"-s", "NVVM_IR_VER_CHK=0"},
             Compiled(old_ir, {}),
             {"-u", "NVVM_IR_VER_CHK"},
             Compiled(old_ir, {})}),
       false},
      // LLVM's own options stay set in the real libNVVM's process: a later
      // plain program of the process compiles otherwise (`.pragma
      // "nounroll"` after -unroll-count=4; another order after
      // -nvptx-sched4reg).
      {"llvm-options-stay-set",
       Join({Compiled(loop, {"-Xopt", "-unroll-count=4"}), Compiled(loop, {}),
             Compiled(loop, {"-Xllc", "-nvptx-sched4reg"}),
             Compiled(loop, {})}),
       false},
      // ... some print on stderr ...
      {"llvm-options-print",
       Compiled(loop, {"-Xllc", "-debug-pass=Structure"}),
       false,
       {},
       true},
      {"llvm-options-print-at-link",
       Compiled(loop, {"-Xlnk", "-debug-pass=Arguments"}),
       false,
       {},
       true},
      // ... and some end the process (help on stdout, exit status 0).
      {"llvm-help-exits", Compiled(loop, {"-Xopt", "-help"}), false, {}, true},
      {"llvm-version-exits",
       Compiled(loop, {"-Xllc", "-version"}),
       false,
       {},
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ProcessResult real = Run(c.name + "-real", c, false);
    ASSERT_EQ(real.exit_code, 0) << real.output;
    ASSERT_FALSE(Report(c.name + "-real").empty());
    ProcessResult real2 = Run(c.name + "-real2", c, false);
    ASSERT_EQ(Report(c.name + "-real"), Report(c.name + "-real2"))
        << "the real libNVVM itself varies";
    if (c.same_output) {
      ASSERT_FALSE(real.output.empty()) << "the case prints nothing";
      ASSERT_EQ(real.output, real2.output) << "the real libNVVM itself varies";
    }

    ProcessResult miss = Run(c.name + "-miss", c, true, daemon_->socket());
    EXPECT_EQ(miss.exit_code, 0) << miss.output;
    if (!c.env.empty()) {
      EXPECT_TRUE(absl::StrContains(miss.output, "is set")) << miss.output;
    }
    EXPECT_EQ(Report(c.name + "-real"), Report(c.name + "-miss"))
        << "miss: " << miss.output;
    if (c.same_output) {
      EXPECT_EQ(LibraryOutput(real.output), LibraryOutput(miss.output));
    }

    const DaemonStats before = testing::StatsOf(daemon_->socket());
    ProcessResult hit = Run(c.name + "-hit", c, true, daemon_->socket());
    EXPECT_EQ(hit.exit_code, 0) << hit.output;
    EXPECT_EQ(Report(c.name + "-real"), Report(c.name + "-hit"))
        << "hit: " << hit.output;
    if (c.same_output) {
      EXPECT_EQ(LibraryOutput(real.output), LibraryOutput(hit.output));
    }
    const DaemonStats after = testing::StatsOf(daemon_->socket());
    EXPECT_EQ(after.misses, before.misses) << hit.output;

    ProcessResult alone =
        Run(c.name + "-alone", c, true, dir_.Sub("no-daemon.sock"));
    EXPECT_EQ(alone.exit_code, 0) << alone.output;
    EXPECT_EQ(Report(c.name + "-real"), Report(c.name + "-alone"))
        << "no daemon: " << alone.output;
    if (c.same_output) {
      EXPECT_EQ(LibraryOutput(real.output), LibraryOutput(alone.output));
    }
    if (c.steps.front() != "-e") {  // (the error strings ask no daemon)
      EXPECT_TRUE(absl::StrContains(alone.output, "not using the daemon"))
          << alone.output;
    }

    if (!c.daemon_answers) continue;
    // The hit process was answered by the daemon's records alone: the real
    // libNVVM was never even loaded.
    EXPECT_FALSE(absl::StrContains(hit.output, "the real libNVVM"))
        << hit.output;
    EXPECT_FALSE(absl::StrContains(hit.output, "real libNVVM loaded"))
        << hit.output;
    EXPECT_TRUE(absl::StrContains(hit.output, "real libNVVM not loaded"))
        << hit.output;
    if (absl::StrContains(absl::StrJoin(c.steps, " "), "-C")) {
      EXPECT_GT(after.hits, before.hits) << hit.output;
    }
  }
}

// A daemon started with what libNVVM reads in its environment keeps none of
// it: NVVM_IR_VER_CHK=0 would take the old IR version that the real libNVVM
// refuses in a caller's clean environment, and the daemon's answer must be
// that refusal.
TEST_F(NvvmDifferential, TheDaemonsOwnEnvironmentNeverReachesAnAnswer) {
  setenv("NVVM_IR_VER_CHK", "0", 1);
  testing::DaemonProcess lenient(dir_.Sub("lenient.sock"),
                                 ":memory:", {"--libnvvm=" + real_});
  const absl::Status started = lenient.Start();
  unsetenv("NVVM_IR_VER_CHK");
  ASSERT_TRUE(started.ok()) << lenient.Log();
  const Case c{"daemon-env", Steps({"-c", "-a", "k", In("old-version.ll"), "-C",
                                    "1", "-arch=compute_90", "-r"})};
  ProcessResult real = Run("daemon-env-real", c, false);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  ASSERT_TRUE(absl::StrContains(Report("daemon-env-real"), "compile 1: 3"))
      << "the real libNVVM took the old IR version: the test shows nothing";
  for (const char* run : {"daemon-env-miss", "daemon-env-hit"}) {
    ProcessResult ours = Run(run, c, true, lenient.socket());
    EXPECT_EQ(Report("daemon-env-real"), Report(run)) << ours.output;
    EXPECT_TRUE(absl::StrContains(ours.output, "real libNVVM not loaded"))
        << ours.output;
  }
}

}  // namespace
}  // namespace jitcache
