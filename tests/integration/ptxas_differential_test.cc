// jitcache-ptxas against the real ptxas. Each case runs the real ptxas,
// then jitcache-ptxas, in the same directory with the same file names and
// the same stale output file, and both must leave the same stdout, stderr
// (but for -v's "Compile time"), exit code and output file (bytes and
// mode, or none). Each runs twice with one set of names (a miss, then a
// hit) and once more with other names, which is a hit too unless the
// answer shows the names (-g, error messages). The cases cover the option
// spellings Triton and nvcc pass and the error paths; what the daemon
// cannot key (--version, a missing input, an unwritable output) must
// reach the real ptxas, in the caller's place.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "client/wire/framed_channel.h"
#include "common/file_stamp.h"
#include "common/framed_protocol.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/ptxas_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::PtxasOutcome;

constexpr char kToolkitPtxas[] = "/usr/local/cuda/bin/ptxas";

// How the daemon should take a case.
enum class Expect {
  kKeyed,  // answered by the daemon; other names hit too
  kNamed,  // answered by the daemon, but for these names alone
  kReal,   // the real ptxas, always
};

struct Case {
  std::string name;
  // IN and OUT stand for the input and output file names.
  std::vector<std::string> arguments;
  Expect expect = Expect::kKeyed;
  std::string ptx = "kernels.ptx";  // which input
  std::string out = "OUT";          // the output file ("elf.o": default)
  // The CUDA source the PTX's .file names, there beside it (ptxas stats it
  // and writes its size and age into a -lineinfo cubin).
  bool source = false;
};

// A source file as it was at a given moment.
void WriteSource(const std::string& path, const std::string& text,
                 int64_t mtime_s) {
  testing::WriteFile(path, text);
  const timespec times[2] = {{mtime_s, 0}, {mtime_s, 0}};
  utimensat(AT_FDCWD, path.c_str(), times, 0);
}

class PtxasDifferential : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kToolkitPtxas, X_OK) != 0) {
      GTEST_SKIP() << "no ptxas in the toolkit";
    }
    ASSERT_TRUE(daemon_.Start().ok()) << daemon_.Log();
    absl::StatusOr<Client> client =
        Client::Connect({.socket_path = daemon_.socket()});
    ASSERT_TRUE(client.ok());
    ProgramOptions options;
    options.arch = "compute_90";
    // Line information, as Triton's PTX has: -lineinfo then writes the
    // source's name into the cubin.
    options.lineinfo = true;
    // A small kernel, and one that needs more registers than -maxrregcount
    // 16 allows (spills).
    absl::StatusOr<ObjectCode> ptx = client->Compile(
        Program("extern \"C\" __global__ void axpy(float a, const float* x, "
                "float* y, int n) { int i = blockIdx.x * blockDim.x + "
                "threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
                "extern \"C\" __global__ void wide(float* y) { float v[32]; "
                "for (int i = 0; i < 32; ++i) v[i] = y[i * threadIdx.x]; "
                "float s = 0; for (int i = 0; i < 32; ++i) "
                "s += v[(i * 7) % 32] * v[i]; y[threadIdx.x] = s; }\n",
                "kernels.cu"),
        options, CodeType::kPtx);
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    // That compile is NVRTC's: the counts below are ptxas runs alone.
    compiles_at_start_ = testing::StatsOf(daemon_.socket()).compiles;
    // NVRTC names the source by its absolute path (in the test's working
    // directory); the cases name it beside the PTX, where they put it.
    std::string named = ptx->bytes;
    const size_t file = named.find(".file");
    ASSERT_NE(file, std::string::npos);
    const size_t open = named.find('"', file);
    named.replace(open, named.find('"', open + 1) - open + 1, "\"kernels.cu\"");
    ptx_["kernels.ptx"] = named;
    std::string bad = named;
    const size_t at = bad.find("mul.wide.s32");
    ASSERT_NE(at, std::string::npos);
    bad.replace(at, 12, "mul.wideX.s32");
    ptx_["bad.ptx"] = bad;
    std::string proc = named;
    proc.replace(proc.find("\"kernels.cu\""), 12, "\"/proc/self/exe\"");
    ptx_["proc.ptx"] = proc;
    // Our front end and the real ptxas, each called "ptxas" (it names
    // itself in its messages and in the cubin).
    std::filesystem::create_directories(dir_.Sub("ours"));
    std::filesystem::create_directories(dir_.Sub("real"));
    std::filesystem::create_symlink(JITCACHE_PTXAS_BINARY,
                                    dir_.Sub("ours/ptxas"));
    std::filesystem::create_symlink(kToolkitPtxas, dir_.Sub("real/ptxas"));
  }

  std::string Ours() const { return dir_.Sub("ours/ptxas"); }
  // PTX that takes ptxas about a second here, and nothing to make: a chain
  // of 40000 dependent fused multiply-adds.
  static std::string SlowPtx() {
    constexpr int kLength = 40000;
    std::string ptx = absl::StrCat(
        ".version 8.0\n.target sm_90\n.address_size 64\n\n"
        ".visible .entry slow(.param .u64 p)\n{\n .reg .b64 %rd<2>;\n"
        " .reg .f32 %f<",
        kLength + 1,
        ">;\n ld.param.u64 %rd0, [p];\n cvta.to.global.u64 %rd1, %rd0;\n"
        " ld.global.f32 %f0, [%rd1];\n");
    for (int i = 0; i < kLength; ++i) {
      absl::StrAppend(&ptx, " fma.rn.f32 %f", i + 1, ", %f", i, ", %f", i,
                      ", 0f3F800001;\n");
    }
    absl::StrAppend(&ptx, " st.global.f32 [%rd1], %f", kLength,
                    ";\n ret;\n}\n");
    return ptx;
  }

  // A run long enough to act on while it is under way (SlowPtx), started
  // by jitcache-ptxas in `dir`; its process, once the daemon is running it.
  pid_t CallerMidRun(const std::string& dir, const std::string& ptx) {
    // The fixture's compile is answered while its place proof still runs
    // (counted in `running`): only once it is done does `running` tell the
    // caller's run.
    EXPECT_TRUE(testing::ProofsSettled(daemon_.socket()));
    testing::WriteFile(dir + "/slow.ptx", ptx);
    testing::SpawnOptions spawn;
    spawn.argv = {"/bin/sh", "-c",
                  "cd " + testing::Quoted(dir) + " && exec " +
                      testing::Quoted(Ours()) +
                      " -arch=sm_90 slow.ptx -o slow.o"};
    spawn.env = Env();
    const pid_t pid = testing::SpawnProcess(spawn);
    const absl::Time give_up = absl::Now() + absl::Minutes(2);
    while (testing::StatsOf(daemon_.socket()).running == 0 &&
           absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    // (When not: how the caller was answered instead, from its log.)
    EXPECT_GT(testing::StatsOf(daemon_.socket()).running, 0u)
        << testing::ReadFile(dir_.Sub("answers.log"));
    return pid;
  }

  std::vector<std::string> Env() const {
    return {"JITCACHE_SOCKET=" + daemon_.socket(),
            "JITCACHE_PTXAS_LOG=" + dir_.Sub("answers.log"),
            "JITCACHE_REAL_PTXAS=" + std::string(kToolkitPtxas)};
  }

  // How the last run of ours was answered: "hit", "compiled", "real".
  std::string LastAnswer() const {
    std::vector<std::string> lines = absl::StrSplit(
        testing::ReadFile(dir_.Sub("answers.log")), '\n', absl::SkipEmpty());
    return lines.empty() ? "" : lines.back().substr(0, lines.back().find(' '));
  }

  // Runs `c` in DIR with input IN and output OUT named `in` and `out`:
  // the real ptxas, then ours, from the same state (the input, and a stale
  // output file).
  std::pair<PtxasOutcome, PtxasOutcome> RunBoth(const Case& c,
                                                const std::string& dir,
                                                const std::string& in,
                                                const std::string& out,
                                                std::string* answer) {
    std::filesystem::create_directories(dir);
    const std::string output = c.out == "OUT" ? out : c.out;
    std::vector<std::string> arguments;
    for (const std::string& a : c.arguments) {
      arguments.push_back(absl::StrReplaceAll(a, {{"IN", in}, {"OUT", out}}));
    }
    auto fresh = [&] {
      testing::WriteFile(in[0] == '/' ? in : dir + "/" + in, ptx_[c.ptx]);
      if (c.source) {
        WriteSource(dir + "/kernels.cu", "// the kernels' source\n",
                    1767225600);
      }
      if (!output.empty() &&
          (output[0] == '/' || output.find('/') == std::string::npos)) {
        const std::string path = output[0] == '/' ? output : dir + "/" + output;
        testing::WriteFile(path, "stale\n");
        chmod(path.c_str(), 0640);
      }
    };
    fresh();
    PtxasOutcome real =
        testing::RunPtxasIn(dir, dir_.Sub("real/ptxas"), arguments, output);
    fresh();
    PtxasOutcome ours = testing::RunPtxasIn(dir, dir_.Sub("ours/ptxas"),
                                            arguments, output, Env());
    *answer = LastAnswer();
    return {real, ours};
  }

  testing::TempDir dir_;
  testing::DaemonProcess daemon_{dir_.Sub("jc.sock"), ":memory:"};
  uint64_t Compiles() const {
    return testing::StatsOf(daemon_.socket()).compiles - compiles_at_start_;
  }

  std::map<std::string, std::string> ptx_;
  uint64_t compiles_at_start_ = 0;

  // `ptx` in `dir` with -lineinfo while its source changes: each change of
  // the source's size or age is a run of its own, each answer the real
  // ptxas's.
  void RunWithSources(const std::string& dir, const std::string& ptx);
};

void ExpectSame(const PtxasOutcome& real, const PtxasOutcome& ours,
                const std::string& label) {
  EXPECT_EQ(real.exit_code, ours.exit_code) << label;
  EXPECT_EQ(real.out, ours.out) << label;
  EXPECT_EQ(real.err, ours.err) << label;
  EXPECT_EQ(real.output.has_value(), ours.output.has_value()) << label;
  if (real.output.has_value() && ours.output.has_value()) {
    EXPECT_TRUE(*real.output == *ours.output)
        << label << ": the output file differs (" << real.output->size()
        << " against " << ours.output->size() << " bytes)";
    EXPECT_EQ(real.mode, ours.mode) << label;
  }
}

TEST_F(PtxasDifferential, EveryCaseMatchesTheRealPtxasMissHitAndRenamed) {
  const std::vector<Case> cases = {
      {"arch-equals", {"-arch=sm_90", "IN", "-o", "OUT"}},
      {"gpu-name-verbose",
       {"--gpu-name", "sm_90a", "-v", "IN", "--output-file", "OUT"}},
      {"triton-style",
       {"-lineinfo", "--fmad=true", "-v", "--gpu-name=sm_90a", "IN", "-o",
        "OUT"}},
      {"O0-verbose", {"-v", "-O0", "-arch", "sm_90", "IN", "-o", "OUT"}},
      {"O2-fmad-off", {"-O2", "--fmad=false", "-arch=sm_90", "IN", "-o=OUT"}},
      {"opt-level-long",
       {"--opt-level=1", "-arch=sm_90", "IN", "--output-file=OUT"}},
      {"maxrregcount-spills",
       {"-maxrregcount=16", "-warn-spills", "-warn-lmem-usage", "-v",
        "-arch=sm_90", "IN", "-o", "OUT"}},
      {"spills-as-errors",
       {"--maxrregcount", "16", "-warn-spills", "-Werror", "-arch=sm_90", "IN",
        "-o", "OUT"}},
      {"relocatable", {"-c", "-arch=sm_90", "IN", "-o", "OUT"}},
      {"entry", {"--entry", "axpy", "-arch=sm_90", "IN", "-o", "OUT"}},
      {"no-warnings", {"-w", "-arch=sm_90", "IN", "-o", "OUT"}},
      {"lineinfo-source-there",
       {"-lineinfo", "-arch=sm_90", "IN", "-o", "OUT"},
       Expect::kKeyed,
       "kernels.ptx",
       "OUT",
       true},
      {"debug-source-there",
       {"-g", "-arch=sm_90", "IN", "-o", "OUT"},
       Expect::kNamed,
       "kernels.ptx",
       "OUT",
       true},
      {"default-output",
       {"-arch=sm_90", "IN"},
       Expect::kKeyed,
       "kernels.ptx",
       "elf.o"},
      {"debug-names-the-file",
       {"-g", "-arch=sm_90", "IN", "-o", "OUT"},
       Expect::kNamed},
      {"syntax-error",
       {"-arch=sm_90", "IN", "-o", "OUT"},
       Expect::kNamed,
       "bad.ptx"},
      {"target-too-high", {"-arch=sm_80", "IN", "-o", "OUT"}},
      {"unknown-arch", {"-arch=sm_99", "IN", "-o", "OUT"}},
      {"unknown-option",
       {"--bogus", "-arch=sm_90", "IN", "-o", "OUT"},
       Expect::kReal},
      {"version", {"--version"}, Expect::kReal, "kernels.ptx", ""},
      {"options-file",
       {"-optf", "IN", "-arch=sm_90", "-o", "OUT"},
       Expect::kReal},
      {"missing-input",
       {"-arch=sm_90", "missing.ptx", "-o", "OUT"},
       Expect::kReal},
      {"output-dir-missing",
       {"-arch=sm_90", "IN", "-o", "nodir/x.o"},
       Expect::kReal,
       "kernels.ptx",
       "nodir/x.o"},
      {"two-inputs", {"-arch=sm_90", "IN", "IN", "-o", "OUT"}, Expect::kReal},
      // ptxas reads the 2 as an input file.
      {"O-level-apart",
       {"-O", "2", "-arch=sm_90", "IN", "-o", "OUT"},
       Expect::kReal},
      // The source named where ptxas runs: its own executable.
      {"file-names-the-process",
       {"-lineinfo", "-arch=sm_90", "IN", "-o", "OUT"},
       Expect::kReal,
       "proc.ptx"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const uint64_t compiles_before = Compiles();
    std::string answer;
    const std::string a = dir_.Sub("cases/" + c.name + "/a");
    auto [real, miss] = RunBoth(c, a, "kernel.ptx", "kernel.cubin", &answer);
    ExpectSame(real, miss, c.name + ", first run");
    EXPECT_EQ(answer, c.expect == Expect::kReal ? "real" : "compiled");
    auto [real_again, hit] =
        RunBoth(c, a, "kernel.ptx", "kernel.cubin", &answer);
    ExpectSame(real_again, hit, c.name + ", second run");
    EXPECT_EQ(answer, c.expect == Expect::kReal ? "real" : "hit");

    const std::string b = dir_.Sub("cases/" + c.name + "/b");
    auto [real_renamed, renamed] =
        RunBoth(c, b, "other-name.ptx", "elsewhere.o", &answer);
    ExpectSame(real_renamed, renamed, c.name + ", other names");
    EXPECT_EQ(answer, c.expect == Expect::kKeyed  ? "hit"
                      : c.expect == Expect::kReal ? "real"
                                                  : "compiled");
    // The first names again, in another directory: ptxas's answers do not
    // hold the directory, so every answer the daemon keeps holds there.
    const std::string c_dir = dir_.Sub("cases/" + c.name + "/c/deeper");
    auto [real_moved, moved] =
        RunBoth(c, c_dir, "kernel.ptx", "kernel.cubin", &answer);
    ExpectSame(real_moved, moved, c.name + ", another directory");
    EXPECT_EQ(answer, c.expect == Expect::kReal ? "real" : "hit");
    // The real ptxas decides, both ways: a run elsewhere is a hit exactly
    // when the real ptxas gives it the first run's answer.
    // What ptxas answered (the output file's mode is the file's: a stale
    // one keeps its own).
    auto same_answer = [](const PtxasOutcome& x, const PtxasOutcome& y) {
      return x.exit_code == y.exit_code && x.out == y.out && x.err == y.err &&
             x.output == y.output;
    };
    auto shares = [&](const PtxasOutcome& real_there) {
      return c.expect != Expect::kReal && same_answer(real_there, real);
    };
    EXPECT_EQ(shares(real_renamed), c.expect == Expect::kKeyed);
    EXPECT_TRUE(shares(real_moved) || c.expect == Expect::kReal);
    // Triton-style calls: absolute names in a fresh temporary directory,
    // run from elsewhere, twice (two directories). A hit is never another
    // answer than the real one's; and once an answer showed the names by
    // their last parts alone (the first temporary run: a name spelled with
    // a directory, which the answer does not hold), every other spelling
    // of the same base names whose real answer is the same is a hit.
    const bool names_out = absl::c_count(c.arguments, "OUT") > 0;
    std::vector<PtxasOutcome> reals = {real, real_renamed, real_moved};
    uint64_t temporary_runs = 0;
    bool second = false;
    for (const char* temporary : {"tmpq8z1x", "tmp3wk0d9m2"}) {
      const std::string tmp = dir_.Sub("cases/" + c.name + "/" + temporary);
      auto [real_tmp, tmp_run] =
          RunBoth(c, tmp, tmp + "/kernel.ptx",
                  names_out ? tmp + "/kernel.cubin" : "kernel.cubin", &answer);
      ExpectSame(real_tmp, tmp_run,
                 c.name + ", absolute temporary names " + temporary);
      const bool seen = absl::c_any_of(reals, [&](const PtxasOutcome& earlier) {
        return same_answer(real_tmp, earlier);
      });
      if (c.expect != Expect::kReal) {
        if (answer == "hit") {
          EXPECT_TRUE(seen) << temporary;
        }
        if (second) {
          EXPECT_EQ(answer == "hit", seen) << temporary << ": " << answer;
        }
      }
      if (answer == "compiled") ++temporary_runs;
      reals.push_back(real_tmp);
      second = true;
    }
    const uint64_t compiles = Compiles() - compiles_before;
    // kNamed: the first run, the other names' run and the temporary
    // names' runs that were no hit.
    EXPECT_EQ(compiles, c.expect == Expect::kKeyed  ? 1u
                        : c.expect == Expect::kReal ? 0u
                                                    : 2u + temporary_runs);
  }
}

// jitcache-ptxas is started once per kernel: what it loads is paid on
// every run (gRPC and protobuf cost about 10 ms), so it loads nothing but
// the C and C++ runtimes, and the daemon's answers come over the hit
// socket.
TEST(JitcachePtxas, LoadsNothingButTheCAndCxxRuntimes) {
  const testing::LoadedLibraries loaded =
      testing::LibrariesLoadedBy({JITCACHE_PTXAS_BINARY});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  EXPECT_GE(loaded.all.size(), 1u) << loaded.output;
  EXPECT_TRUE(loaded.beyond_the_runtimes.empty()) << loaded.output;
}

TEST_F(PtxasDifferential, EightProcessesAtOnceAreOneRun) {
  const Case c{"herd", {"-v", "-arch=sm_90a", "IN", "-o", "OUT"}};
  const std::string dir = dir_.Sub("herd");
  std::filesystem::create_directories(dir);
  testing::WriteFile(dir + "/kernels.ptx", ptx_["kernels.ptx"]);
  const PtxasOutcome real = testing::RunPtxasIn(
      dir, dir_.Sub("real/ptxas"),
      {"-v", "-arch=sm_90a", "kernels.ptx", "-o", "r.o"}, "r.o");
  ASSERT_EQ(real.exit_code, 0) << real.err;
  std::vector<PtxasOutcome> ours(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      // Each process its own input and output names, as Triton's are.
      const std::string in = absl::StrCat("rank", i, ".ptx");
      const std::string out = absl::StrCat("rank", i, ".o");
      testing::WriteFile(dir + "/" + in, ptx_["kernels.ptx"]);
      ours[i] = testing::RunPtxasIn(dir, dir_.Sub("ours/ptxas"),
                                    {"-v", "-arch=sm_90a", in, "-o", out}, out,
                                    Env());
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(ours[i].exit_code, 0) << ours[i].err;
    EXPECT_TRUE(ours[i].output == real.output) << "rank " << i;
  }
  // One run of ptxas; the others joined it or hit its answer. The -v
  // reports hold the one run's "Compile time", the same in all eight.
  EXPECT_EQ(Compiles(), 1u);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(ours[i].err, ours[0].err);
}

// jitcache-ptxas asks nothing but the daemon's framed socket: without one (a
// daemon run with --hit_socket=false, or none at all) the real ptxas runs
// in its place, with the same result.
TEST_F(PtxasDifferential, WithoutTheDaemonsFramedSocketTheRealPtxasRuns) {
  testing::DaemonProcess plain(dir_.Sub("plain.sock"),
                               ":memory:", {"--hit_socket=false"});
  ASSERT_TRUE(plain.Start().ok()) << plain.Log();
  const std::string dir = dir_.Sub("nohits");
  std::filesystem::create_directories(dir);
  testing::WriteFile(dir + "/k.ptx", ptx_["kernels.ptx"]);
  const std::vector<std::string> arguments = {"-v", "-arch=sm_90", "k.ptx",
                                              "-o", "k.o"};
  const PtxasOutcome real =
      testing::RunPtxasIn(dir, dir_.Sub("real/ptxas"), arguments, "k.o");
  ASSERT_EQ(real.exit_code, 0) << real.err;
  for (const std::string& socket : {plain.socket(), dir_.Sub("none.sock")}) {
    std::vector<std::string> env = Env();
    env.front() = "JITCACHE_SOCKET=" + socket;
    const PtxasOutcome ours =
        testing::RunPtxasIn(dir, Ours(), arguments, "k.o", env);
    EXPECT_EQ(LastAnswer(), "real") << socket;
    ExpectSame(real, ours, socket);
  }
  EXPECT_EQ(testing::StatsOf(plain.socket()).ptxas_requests, 0u);
}

// The caller goes (killed, or Triton's timeout) while its run is under
// way: the run goes on, is stored, and the next caller's is a hit.
TEST_F(PtxasDifferential, ARunWhoseCallerDiedIsTheNextCallersHit) {
  const std::string dir = dir_.Sub("died");
  std::filesystem::create_directories(dir);
  const pid_t caller = CallerMidRun(dir, SlowPtx());
  kill(caller, SIGKILL);
  testing::WaitProcess(caller, absl::Minutes(1));
  const absl::Time give_up = absl::Now() + absl::Minutes(2);
  while ((Compiles() == 0 || testing::StatsOf(daemon_.socket()).running > 0) &&
         absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const std::vector<std::string> arguments = {"-arch=sm_90", "slow.ptx", "-o",
                                              "next.o"};
  const PtxasOutcome ours =
      testing::RunPtxasIn(dir, Ours(), arguments, "next.o", Env());
  EXPECT_EQ(LastAnswer(), "hit");
  const PtxasOutcome real =
      testing::RunPtxasIn(dir, dir_.Sub("real/ptxas"), arguments, "next.o");
  ExpectSame(real, ours, "after the caller died");
  EXPECT_EQ(Compiles(), 1u);
}

// The daemon stops while a caller waits on its run: the caller gets no
// answer and runs the real ptxas itself, with the same result.
TEST_F(PtxasDifferential, ACallerWhoseDaemonStopsMidRunRunsTheRealPtxas) {
  const std::string dir = dir_.Sub("stopped");
  std::filesystem::create_directories(dir);
  const pid_t caller = CallerMidRun(dir, SlowPtx());
  daemon_.Stop();
  EXPECT_EQ(testing::WaitProcess(caller, absl::Minutes(2)), 0);
  EXPECT_EQ(LastAnswer(), "real");
  const std::string ours = testing::ReadFile(dir + "/slow.o");
  const PtxasOutcome real =
      testing::RunPtxasIn(dir, dir_.Sub("real/ptxas"),
                          {"-arch=sm_90", "slow.ptx", "-o", "r.o"}, "r.o");
  ASSERT_EQ(real.exit_code, 0) << real.err;
  EXPECT_FALSE(ours.empty());
  EXPECT_TRUE(ours == real.output);
}

TEST_F(PtxasDifferential, APtxasTheDaemonDoesNotRunIsRunByTheCaller) {
  // A copy of the toolkit's ptxas: the same bytes, another file, which no
  // administrator registered.
  const std::string copy = dir_.Sub("copy/ptxas");
  std::filesystem::create_directories(dir_.Sub("copy"));
  std::filesystem::copy_file(kToolkitPtxas, copy);
  chmod(copy.c_str(), 0755);
  const std::string dir = dir_.Sub("unregistered");
  std::filesystem::create_directories(dir);
  testing::WriteFile(dir + "/k.ptx", ptx_["kernels.ptx"]);
  const std::vector<std::string> arguments = {"-arch=sm_90", "k.ptx", "-o",
                                              "k.o"};
  std::vector<std::string> env = Env();
  env.back() = "JITCACHE_REAL_PTXAS=" + copy;
  const PtxasOutcome ours =
      testing::RunPtxasIn(dir, dir_.Sub("ours/ptxas"), arguments, "k.o", env);
  EXPECT_EQ(LastAnswer(), "real");
  // The caller's log says why, in the daemon's words.
  EXPECT_THAT(testing::ReadFile(dir_.Sub("answers.log")),
              ::testing::HasSubstr("the daemon refused it (code 9)"));
  const PtxasOutcome real =
      testing::RunPtxasIn(dir, dir_.Sub("real/ptxas"), arguments, "k.o");
  ExpectSame(real, ours, "unregistered");
  EXPECT_EQ(Compiles(), 0u);
  EXPECT_EQ(testing::StatsOf(daemon_.socket()).ptxas_requests, 1u);

  // Registered (--ptxas), the same copy is run by the daemon, and keyed by
  // its bytes: the same as the toolkit's.
  testing::DaemonProcess registered(dir_.Sub("reg.sock"),
                                    ":memory:", {"--ptxas=" + copy});
  ASSERT_TRUE(registered.Start().ok()) << registered.Log();
  env.front() = "JITCACHE_SOCKET=" + registered.socket();
  const PtxasOutcome served =
      testing::RunPtxasIn(dir, dir_.Sub("ours/ptxas"), arguments, "k.o", env);
  EXPECT_EQ(LastAnswer(), "compiled");
  ExpectSame(real, served, "registered");
  EXPECT_EQ(testing::StatsOf(registered.socket()).compiles, 1u);

  // Changed after the daemon hashed it: never run by the daemon again.
  ASSERT_EQ(truncate(copy.c_str(),
                     static_cast<off_t>(std::filesystem::file_size(copy))),
            0);
  std::filesystem::last_write_time(
      copy, std::filesystem::file_time_type::clock::now());
  const PtxasOutcome changed =
      testing::RunPtxasIn(dir, dir_.Sub("ours/ptxas"),
                          {"-arch=sm_90", "k.ptx", "-o", "k2.o"}, "k2.o", env);
  EXPECT_EQ(LastAnswer(), "real");
  EXPECT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_EQ(testing::StatsOf(registered.socket()).compiles, 1u);
}

// What the daemon answers a raw PtxasRequest with, on either socket.
struct RawAnswer {
  grpc::StatusCode code = grpc::StatusCode::OK;  // the gRPC socket's
  v1::CompileResponse response;                  // its answer, when OK
  // The framed socket's answer (jitcache-ptxas's way), byte for byte; nullopt
  // when it said "ask gRPC" (then the caller runs its own ptxas).
  std::optional<std::string> over_hit_socket;
  // Why the framed socket refused it (its code 0 when it did not).
  FramedChannel::Refusal refused;
};

RawAnswer AskBoth(const std::string& socket, const v1::PtxasRequest& request) {
  RawAnswer answer;
  auto stub = v1::JitCache::NewStub(grpc::CreateChannel(
      "unix://" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  answer.code = stub->Ptxas(&context, request, &answer.response).error_code();
  FramedChannel channel(socket);
  std::string buffer;
  std::optional<std::string_view> bytes = channel.Ask(
      std::string(1, framed_protocol::kPtxas) + request.SerializeAsString(),
      buffer, std::chrono::minutes(2), &answer.refused);
  if (bytes.has_value()) answer.over_hit_socket = std::string(*bytes);
  return answer;
}

// The Ptxas requests any local user may send, without jitcache-ptxas's
// care, over the gRPC socket and over the framed socket: whatever the daemon
// cannot answer as the caller's ptxas would is refused, and nothing is
// stored.
TEST_F(PtxasDifferential, RequestsTheDaemonCannotAnswerExactlyAreRefused) {
  v1::PtxasRequest request;
  const std::string resolved = std::filesystem::canonical(kToolkitPtxas);
  struct stat st;
  ASSERT_EQ(stat(resolved.c_str(), &st), 0);
  v1::ToolkitLibrary* ptxas = request.mutable_ptxas();
  ptxas->set_name("ptxas");
  ptxas->set_path(resolved);
  ptxas->set_device(st.st_dev);
  ptxas->set_inode(st.st_ino);
  ptxas->set_size(static_cast<uint64_t>(st.st_size));
  ptxas->set_mtime_ns(StampNs(st.st_mtim));
  ptxas->set_ctime_ns(StampNs(st.st_ctim));
  request.set_program("ptxas");
  request.set_ptx(ptx_["kernels.ptx"]);
  request.set_working_directory("/work");
  for (const char* a : {"-arch=sm_90", "k.ptx", "-o", "k.o"}) {
    request.add_arguments(a);
  }
  request.add_sources()->set_path("kernels.cu");
  const RawAnswer fine = AskBoth(daemon_.socket(), request);
  ASSERT_EQ(fine.code, grpc::StatusCode::OK);
  EXPECT_EQ(fine.response.ptxas_run().exit_status(), 0);
  EXPECT_FALSE(fine.response.object().empty());
  // The second ask (the framed socket's) was the first's hit.
  ASSERT_TRUE(fine.over_hit_socket.has_value());
  v1::CompileResponse hit;
  ASSERT_TRUE(hit.ParseFromString(*fine.over_hit_socket));
  EXPECT_EQ(hit.served(), v1::SERVED_HIT);
  EXPECT_EQ(hit.object(), fine.response.object());
  // The fixture's NVRTC compile of kernels.cu is answered under its place's
  // key while its place proof runs; its final record is written after.
  ASSERT_TRUE(testing::ProofsSettled(daemon_.socket()));
  const uint64_t entries = testing::StatsOf(daemon_.socket()).store_entries;

  auto set_arguments = [](v1::PtxasRequest& r,
                          std::vector<std::string> arguments) {
    r.clear_arguments();
    for (std::string& a : arguments) r.add_arguments(std::move(a));
  };
  struct Refused {
    std::string why;
    std::function<void(v1::PtxasRequest&)> change;
    grpc::StatusCode code;
  };
  const std::vector<Refused> refused = {
      {"another file than the daemon's",
       [](v1::PtxasRequest& r) {
         r.mutable_ptxas()->set_inode(r.ptxas().inode() + 1);
       },
       grpc::StatusCode::FAILED_PRECONDITION},
      {"a ptxas nobody registered",
       [](v1::PtxasRequest& r) {
         r.mutable_ptxas()->set_path("/usr/bin/true");
       },
       grpc::StatusCode::FAILED_PRECONDITION},
      {"an options file",
       [&](v1::PtxasRequest& r) {
         set_arguments(r, {"-optf", "/etc/shadow", "k.ptx"});
       },
       grpc::StatusCode::FAILED_PRECONDITION},
      {"a path through ..",
       [&](v1::PtxasRequest& r) {
         set_arguments(r, {"-arch=sm_90", "../k.ptx", "-o", "k.o"});
       },
       grpc::StatusCode::FAILED_PRECONDITION},
      // New PTX (a miss: a nameless answer already kept holds for any
      // names, and the caller writes the output itself), which the view
      // cannot place where the caller named it.
      {"an output inside the toolkit",
       [&](v1::PtxasRequest& r) {
         r.mutable_ptx()->append("// another program\n");
         set_arguments(r, {"-arch=sm_90", "k.ptx", "-o",
                           std::string(kToolkitPtxas) + ".o"});
       },
       grpc::StatusCode::FAILED_PRECONDITION},
      {"an input inside the toolkit",
       [&](v1::PtxasRequest& r) {
         r.mutable_ptx()->append("// yet another program\n");
         set_arguments(
             r, {"-arch=sm_90", "/usr/local/cuda/bin/k.ptx", "-o", "k.o"});
       },
       grpc::StatusCode::INTERNAL},
      {"a relative working directory",
       [](v1::PtxasRequest& r) { r.set_working_directory("work"); },
       grpc::StatusCode::INVALID_ARGUMENT},
      {"a source the PTX does not name",
       [](v1::PtxasRequest& r) { r.mutable_sources(0)->set_path("other.cu"); },
       grpc::StatusCode::INVALID_ARGUMENT},
      {"no word of the source the PTX names",
       [](v1::PtxasRequest& r) { r.clear_sources(); },
       grpc::StatusCode::INVALID_ARGUMENT},
      {"a NUL in an argument",
       [&](v1::PtxasRequest& r) {
         set_arguments(r, {"-arch=sm_90", std::string("k\0.ptx", 6)});
       },
       grpc::StatusCode::INVALID_ARGUMENT},
  };
  for (const Refused& r : refused) {
    v1::PtxasRequest changed = request;
    r.change(changed);
    const RawAnswer answer = AskBoth(daemon_.socket(), changed);
    EXPECT_EQ(answer.code, r.code) << r.why;
    EXPECT_FALSE(answer.over_hit_socket.has_value()) << r.why;
    // The framed socket says why, as gRPC does: its caller cannot ask it.
    EXPECT_EQ(answer.refused.code, static_cast<int>(r.code)) << r.why;
    EXPECT_NE(answer.refused.message, "") << r.why;
  }
  EXPECT_EQ(testing::StatsOf(daemon_.socket()).store_entries, entries);
  // The view staged nothing through the toolkit's link onto this machine's
  // own toolkit (it once did: the link's absolute target was followed
  // before the view was entered).
  EXPECT_FALSE(std::filesystem::exists(
      std::filesystem::canonical("/usr/local/cuda") / "bin" / "k.ptx"));

  // The first call's answer, kept without names, holds wherever the
  // caller's files are: jitcache-ptxas writes the output itself, and runs
  // the real ptxas when it cannot.
  v1::PtxasRequest elsewhere = request;
  elsewhere.set_working_directory("/somewhere/else");
  set_arguments(elsewhere,
                {"-arch=sm_90", "x.ptx", "-o", "/usr/local/cuda/x.o"});
  const RawAnswer there = AskBoth(daemon_.socket(), elsewhere);
  ASSERT_EQ(there.code, grpc::StatusCode::OK);
  EXPECT_EQ(there.response.served(), v1::SERVED_HIT);
  EXPECT_EQ(there.response.object(), fine.response.object());
  ASSERT_TRUE(there.over_hit_socket.has_value());
}

// A registered binary runs confined as a compile does: it can exec
// nothing (not even the toolkit's ptxas by path), open no socket, see no
// file of the daemon's machine, and inherits no descriptor of its worker.
TEST_F(PtxasDifferential, ARegisteredBinaryRunsInTheWorkersSandbox) {
  testing::DaemonProcess probed(
      dir_.Sub("probe.sock"),
      ":memory:", {"--ptxas=" + std::string(JITCACHE_SANDBOX_PROBE)});
  ASSERT_TRUE(probed.Start().ok()) << probed.Log();
  const std::string dir = dir_.Sub("probe");
  std::filesystem::create_directories(dir);
  testing::WriteFile(dir + "/k.ptx", ptx_["kernels.ptx"]);
  std::vector<std::string> env = Env();
  env.front() = "JITCACHE_SOCKET=" + probed.socket();
  env.back() = "JITCACHE_REAL_PTXAS=" + std::string(JITCACHE_SANDBOX_PROBE);
  const PtxasOutcome run =
      testing::RunPtxasIn(dir, dir_.Sub("ours/ptxas"),
                          {"-arch=sm_90", "k.ptx", "-o", "k.o"}, "k.o", env);
  EXPECT_EQ(LastAnswer(), "compiled");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.output, "probed\n");
  EXPECT_EQ(run.err,
            "execve: EPERM\n"
            "execveat by path: EPERM\n"
            "socket: EPERM\n"
            "open /etc/passwd: ENOENT\n"
            "write into the toolkit: EROFS\n"
            "open the worker's socket: EBADF\n");
}

// What the caller's stat says of the source a PTX names is part of the
// key: a source changed since is another run of ptxas (12.8 writes its size
// and modification time into the cubin), answered as the real one does.
TEST_F(PtxasDifferential, ASourceOfAnotherSizeOrAgeIsAnotherRun) {
  const size_t file = ptx_["kernels.ptx"].find(".file");
  ASSERT_NE(file, std::string::npos);
  // The directive where NVRTC writes it, and after a comment on its line
  // (ptxas reads it there too).
  std::string after_comment = ptx_["kernels.ptx"];
  after_comment.insert(file, "/* the source */ ");
  for (const auto& [where, ptx] :
       {std::pair<std::string, std::string>{"line-start", ptx_["kernels.ptx"]},
        {"after-comment", after_comment}}) {
    SCOPED_TRACE(where);
    RunWithSources(dir_.Sub("source-" + where), ptx);
  }
}

void PtxasDifferential::RunWithSources(const std::string& dir,
                                       const std::string& ptx) {
  std::filesystem::create_directories(dir);
  testing::WriteFile(dir + "/k.ptx", ptx);
  const std::vector<std::string> arguments = {"-lineinfo", "-arch=sm_90",
                                              "k.ptx", "-o", "k.o"};
  struct Moment {
    std::string text;
    int64_t mtime_s;
    std::string answer;  // jitcache-ptxas's
  };
  for (const Moment& m : std::vector<Moment>{
           {"// v1\n", 1767225600, "compiled"},
           {"// v1\n", 1767225600, "hit"},
           {"// v1\n", 1767229200, "compiled"},  // an hour older
           {"// v2, longer\n", 1767229200, "compiled"},
           {"", -1, "compiled"},  // gone
       }) {
    if (m.mtime_s < 0) {
      unlink((dir + "/kernels.cu").c_str());
    } else {
      WriteSource(dir + "/kernels.cu", m.text, m.mtime_s);
    }
    const PtxasOutcome real =
        testing::RunPtxasIn(dir, dir_.Sub("real/ptxas"), arguments, "k.o");
    const PtxasOutcome ours = testing::RunPtxasIn(dir, dir_.Sub("ours/ptxas"),
                                                  arguments, "k.o", Env());
    ExpectSame(real, ours, m.text);
    EXPECT_EQ(LastAnswer(), m.answer) << m.text << " " << m.mtime_s;
  }
}

}  // namespace
}  // namespace jitcache
