// libnvJitLink.so.13 against the real nvJitLink. One C program
// (tests/testing/nvjitlink_case.c) drives a link and prints every call's
// result, both logs after each call, and both outputs. For each case it
// runs once with the toolkit's nvJitLink (the oracle), then twice with
// ours in front (LD_LIBRARY_PATH): a miss, and in a new process a hit that
// the real nvJitLink never answers. All three must print and write the
// same bytes. The cases cover the option spellings programs pass and the
// error paths: refused options, a missing -arch, bad inputs, unresolved
// symbols, a link that goes on after a failed add.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "client/wire/framed_channel.h"
#include "common/digest.h"
#include "common/framed_protocol.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "jitcache/store_admin.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::ProcessResult;

// nvJitLinkInputType's numbers.
constexpr int kCubin = 1, kPtx = 2, kLtoir = 3;

struct Case {
  std::string name;
  std::vector<std::string> steps;  // the driver's arguments after OUTDIR
  // The second process is answered by the daemon alone. Not so for a link
  // never completed, or one nvJitLinkCreate refused: the real nvJitLink
  // answers (13.0 crashes in nvJitLinkComplete after a refused create,
  // and ends the process on an unknown architecture), in the caller's
  // process as it would without us.
  bool hits = true;
};

class NvJitLinkDifferential : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start().ok()) << daemon_.Log();
    absl::StatusOr<Client> client =
        Client::Connect({.socket_path = daemon_.socket()});
    ASSERT_TRUE(client.ok());
    client_.emplace(*std::move(client));
    // Inputs made by NVRTC through the daemon (byte-identical to NVRTC's).
    const std::string caller =
        "extern __device__ float f(float);\n"
        "extern \"C\" __global__ void k(float* x) "
        "{ x[threadIdx.x] = f(x[threadIdx.x]); }\n";
    const std::string callee =
        "__device__ float f(float v) { return v * v + 1.0f; }\n";
    Make("caller.ltoir", caller, "caller.cu", CodeType::kLtoir);
    Make("callee.ltoir", callee, "callee.cu", CodeType::kLtoir);
    Make("caller.ptx", caller, "caller.cu", CodeType::kPtx);
    Make("callee.ptx", callee, "callee.cu", CodeType::kPtx);
    Make("callee.cubin", callee, "callee.cu", CodeType::kCubin);
    testing::WriteFile(dir_.Sub("garbage"), "this is not an object\n");
    testing::WriteFile(dir_.Sub("bad.ptx"),
                       ".version 9.0\n.target sm_90\n.address_size 64\n"
                       ".visible .entry broken() { bogus.instruction; }\n");
  }

  void Make(const std::string& file, const std::string& source,
            const std::string& name, CodeType target) {
    ProgramOptions options;
    options.arch = target == CodeType::kPtx ? "compute_90" : "sm_90";
    options.relocatable_device_code = true;
    // Settled before a test starts (no proof of it left to write later).
    options.wait_for_proof = true;
    absl::StatusOr<ObjectCode> code =
        client_->Compile(Program(source, name), options, target);
    ASSERT_TRUE(code.ok()) << code.status();
    testing::WriteFile(dir_.Sub(file), code->bytes);
  }

  std::string In(const std::string& file) const { return dir_.Sub(file); }

  // The driver into OUT, through ours or the real one, with `env` added.
  ProcessResult Run(const std::string& out, const Case& c, bool ours,
                    const std::vector<std::string>& env = {}) {
    mkdir(dir_.Sub(out).c_str(), 0700);
    std::vector<std::string> argv = {"/usr/bin/env"};
    if (ours) {
      argv.push_back(std::string("LD_LIBRARY_PATH=") + JITCACHE_NVJITLINK_DIR);
      argv.push_back("JITCACHE_SOCKET=" + daemon_.socket());
      argv.push_back("JITCACHE_NVJITLINK_VERBOSE=1");
    }
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(JITCACHE_NVJITLINK_CASE);
    argv.push_back(dir_.Sub(out));
    argv.insert(argv.end(), c.steps.begin(), c.steps.end());
    return testing::RunProcess(argv);
  }

  void ExpectSame(const std::string& real, const std::string& ours,
                  const std::string& label) {
    for (const char* file : {"report", "linked.cubin", "linked.ptx"}) {
      EXPECT_EQ(testing::ReadFile(dir_.Sub(real + "/" + file)),
                testing::ReadFile(dir_.Sub(ours + "/" + file)))
          << label << ": " << file << " differs from the real nvJitLink's";
    }
  }

  testing::TempDir dir_;
  testing::DaemonProcess daemon_{dir_.Sub("jc.sock"), ":memory:"};
  std::optional<Client> client_;
};

std::vector<std::string> Add(int type, const std::string& name,
                             const std::string& path) {
  return {"-a", std::to_string(type), name, path};
}

TEST_F(NvJitLinkDifferential, EveryCaseMatchesTheRealNvJitLinkMissAndHit) {
  auto steps = [](std::vector<std::string> options,
                  std::vector<std::vector<std::string>> adds, bool complete) {
    std::vector<std::string> out;
    for (const std::string& o : options) {
      out.push_back("-o");
      out.push_back(o);
    }
    for (const auto& a : adds) out.insert(out.end(), a.begin(), a.end());
    if (complete) out.push_back("-c");
    return out;
  };
  const auto lto_pair = std::vector<std::vector<std::string>>{
      Add(kLtoir, "caller.ltoir", In("caller.ltoir")),
      Add(kLtoir, "callee.ltoir", In("callee.ltoir"))};
  const auto ptx_pair = std::vector<std::vector<std::string>>{
      Add(kPtx, "caller.ptx", In("caller.ptx")),
      Add(kPtx, "callee.ptx", In("callee.ptx"))};
  const std::vector<Case> cases = {
      {"lto", steps({"-arch=sm_90", "-lto"}, lto_pair, true)},
      {"lto-version",
       [&] {
         std::vector<std::string> v =
             steps({"-arch=sm_90", "-lto"}, lto_pair, true);
         v.insert(v.end() - 1, "-V");
         return v;
       }()},
      {"lto-O3-ftz",
       steps({"-arch=sm_90", "-lto", "-O3", "-ftz=true"}, lto_pair, true)},
      {"lto-ptx-out", steps({"-arch=sm_90", "-lto", "-ptx"}, lto_pair, true)},
      {"lto-lineinfo-maxrreg",
       steps({"-arch=sm_90", "-lto", "-lineinfo", "-maxrregcount=32"}, lto_pair,
             true)},
      // ("-arch" "sm_90" as two options crashes the real nvJitLink 13.0.)
      {"lto-arch-twice",
       steps({"-arch=sm_90", "-lto", "-arch=sm_90"}, lto_pair, true)},
      {"ptx", steps({"-arch=sm_90"}, ptx_pair, true)},
      {"ptx-and-cubin", steps({"-arch=sm_90"},
                              {Add(kPtx, "caller.ptx", In("caller.ptx")),
                               Add(kCubin, "callee.cubin", In("callee.cubin"))},
                              true)},
      {"unknown-option", steps({"-arch=sm_90", "-nonsense"}, lto_pair, true),
       false},
      {"no-arch", steps({"-lto"}, lto_pair, true), false},
      {"bad-arch", steps({"-arch=sm_1", "-lto"}, lto_pair, true), false},
      {"garbage-ltoir", steps({"-arch=sm_90", "-lto"},
                              {Add(kLtoir, "garbage", In("garbage")),
                               Add(kLtoir, "callee.ltoir", In("callee.ltoir"))},
                              true)},
      // The same bytes under another name: nvJitLink's log names it.
      {"garbage-renamed",
       steps({"-arch=sm_90", "-lto"},
             {Add(kLtoir, "other-garbage", In("garbage")),
              Add(kLtoir, "callee.ltoir", In("callee.ltoir"))},
             true)},
      {"bad-ptx",
       steps({"-arch=sm_90"}, {Add(kPtx, "bad.ptx", In("bad.ptx"))}, true)},
      {"ltoir-without-lto", steps({"-arch=sm_90"}, lto_pair, true)},
      {"unresolved",
       steps({"-arch=sm_90", "-lto"},
             {Add(kLtoir, "caller.ltoir", In("caller.ltoir"))}, true)},
      {"other-name", steps({"-arch=sm_90", "-lto"},
                           {Add(kLtoir, "renamed", In("caller.ltoir"))}, true)},
      {"wrong-type",
       steps({"-arch=sm_90"}, {Add(kCubin, "caller.ptx", In("caller.ptx"))},
             true)},
      {"no-complete", steps({"-arch=sm_90", "-lto"}, lto_pair, false), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ProcessResult real = Run(c.name + "-real", c, false);
    // (An unknown architecture ends the process before a line is written.)
    if (c.name != "bad-arch") {
      ASSERT_FALSE(testing::ReadFile(dir_.Sub(c.name + "-real/report")).empty())
          << real.output;
    }
    ProcessResult miss = Run(c.name + "-miss", c, true);
    EXPECT_EQ(miss.exit_code, real.exit_code) << miss.output;
    ExpectSame(c.name + "-real", c.name + "-miss", c.name + " (miss)");
    absl::StatusOr<DaemonStats> before = client_->Stats();
    ASSERT_TRUE(before.ok());
    ProcessResult hit = Run(c.name + "-hit", c, true);
    EXPECT_EQ(hit.exit_code, real.exit_code) << hit.output;
    ExpectSame(c.name + "-real", c.name + "-hit", c.name + " (hit)");
    absl::StatusOr<DaemonStats> after = client_->Stats();
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(after->compiler_crashes, before->compiler_crashes);
    if (!c.hits) continue;
    // The second process is answered by the daemon's record alone: every
    // call a hit, nothing linked, the real nvJitLink never asked.
    EXPECT_FALSE(absl::StrContains(hit.output, "the real nvJitLink"))
        << hit.output;
    // Nor is it loaded: the process maps only this library.
    for (absl::string_view line : absl::StrSplit(hit.output, '\n')) {
      if (absl::StartsWith(line, "mapped ")) {
        EXPECT_TRUE(absl::StrContains(line, JITCACHE_NVJITLINK_DIR)) << line;
      }
    }
    EXPECT_EQ(after->misses, before->misses);
    EXPECT_GT(after->hits, before->hits);
  }
}

// The inputs' names are keyed only where the real nvJitLink shows them.
// Each case is linked by the real nvJitLink under two sets of names (a
// caller's own, and the temporary paths numba-cuda and CuPy name inputs
// by, with the same extensions), then through ours under the first names and,
// in a new process, under the second. Where the two real answers are the same
// (but for the report's own labels), the second process is the daemon's hit;
// where they differ, it is linked again under its own names. Either way its
// answer is the real nvJitLink's under its names.
TEST_F(NvJitLinkDifferential, NamesAreKeyedOnlyWhereTheRealNvJitLinkShowsThem) {
  struct Named {
    std::string name;
    std::vector<std::string> options;
    std::vector<std::pair<int, std::string>> inputs;  // kind, file
  };
  const std::vector<std::pair<int, std::string>> lto = {
      {kLtoir, "caller.ltoir"}, {kLtoir, "callee.ltoir"}};
  const std::vector<Named> cases = {
      {"lto", {"-arch=sm_90", "-lto"}, lto},
      {"lto-lineinfo", {"-arch=sm_90", "-lto", "-lineinfo"}, lto},
      {"lto-debug", {"-arch=sm_90", "-lto", "-g"}, lto},
      {"lto-ptx-out", {"-arch=sm_90", "-lto", "-ptx"}, lto},
      {"ptx", {"-arch=sm_90"}, {{kPtx, "caller.ptx"}, {kPtx, "callee.ptx"}}},
      {"ptx-and-cubin",
       {"-arch=sm_90"},
       {{kPtx, "caller.ptx"}, {kCubin, "callee.cubin"}}},
      {"garbage",
       {"-arch=sm_90", "-lto"},
       {{kLtoir, "garbage"}, {kLtoir, "callee.ltoir"}}},
      {"bad-ptx", {"-arch=sm_90"}, {{kPtx, "bad.ptx"}}},
      {"unresolved", {"-arch=sm_90", "-lto"}, {{kLtoir, "caller.ltoir"}}},
      {"wrong-type", {"-arch=sm_90"}, {{kCubin, "caller.ptx"}}},
  };
  // The same extension (the key keeps it), other directories and stems.
  auto names_for = [](const Named& c, const std::vector<std::string>& stems) {
    std::vector<std::string> out;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const std::string& file = c.inputs[i].second;
      const size_t dot = file.rfind('.');
      out.push_back(stems[i] +
                    (dot == std::string::npos ? "" : file.substr(dot)));
    }
    return out;
  };
  // A report without its "add NAME:" labels (the driver's, not nvJitLink's).
  auto unlabelled = [&](const std::string& dir,
                        const std::vector<std::string>& names) {
    std::string report = testing::ReadFile(dir_.Sub(dir + "/report"));
    for (size_t i = 0; i < names.size(); ++i) {
      report = absl::StrReplaceAll(
          report, {{"add " + names[i] + ":", absl::StrCat("add #", i, ":")}});
    }
    return report + testing::ReadFile(dir_.Sub(dir + "/linked.cubin")) +
           testing::ReadFile(dir_.Sub(dir + "/linked.ptx"));
  };
  int shared = 0, apart = 0;
  for (const Named& c : cases) {
    SCOPED_TRACE(c.name);
    auto steps = [&](const std::vector<std::string>& names) {
      std::vector<std::string> out;
      for (const std::string& o : c.options) {
        out.push_back("-o");
        out.push_back(o);
      }
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        std::vector<std::string> add =
            Add(c.inputs[i].first, names[i], In(c.inputs[i].second));
        out.insert(out.end(), add.begin(), add.end());
      }
      out.push_back("-c");
      return out;
    };
    const std::vector<std::string> first_names =
        names_for(c, {"caller", "callee"});
    const std::vector<std::string> second_names =
        names_for(c, {"/tmp/tmpq8z1x/kernel-7", "link_1"});
    const Case first{c.name, steps(first_names)};
    const Case second{c.name, steps(second_names)};
    Run(c.name + "-real1", first, false);
    Run(c.name + "-real2", second, false);
    const bool same_real = unlabelled(c.name + "-real1", first_names) ==
                           unlabelled(c.name + "-real2", second_names);
    Run(c.name + "-ours1", first, true);
    ExpectSame(c.name + "-real1", c.name + "-ours1", c.name + " (first)");
    // Until the proof under other names has ended, other names wait for it.
    ASSERT_TRUE(testing::ProofsSettled(daemon_.socket()));
    absl::StatusOr<DaemonStats> before = client_->Stats();
    ASSERT_TRUE(before.ok());
    ProcessResult ours = Run(c.name + "-ours2", second, true);
    ExpectSame(c.name + "-real2", c.name + "-ours2", c.name + " (second)");
    absl::StatusOr<DaemonStats> after = client_->Stats();
    ASSERT_TRUE(after.ok());
    if (same_real) {
      ++shared;
      EXPECT_EQ(after->misses, before->misses) << ours.output;
      EXPECT_GT(after->hits, before->hits) << ours.output;
    } else {
      ++apart;
      EXPECT_EQ(after->misses, before->misses + 1) << ours.output;
    }
  }
  // Both happen: the cases decide something each way.
  EXPECT_GT(shared, 0);
  EXPECT_GT(apart, 0);
  std::printf("names: %d cases shared, %d keyed by their names\n", shared,
              apart);
}

// Eight processes starting the same new link at once (as the ranks of a
// job do): each answers its own first calls with the real nvJitLink, and
// the daemon links once for all of them.
TEST_F(NvJitLinkDifferential, EightProcessesAtOnceAreOneLink) {
  const Case c{
      "herd",
      {"-o", "-arch=sm_90", "-o", "-lto", "-o", "-O3", "-a",
       std::to_string(kLtoir), "caller.ltoir", In("caller.ltoir"), "-a",
       std::to_string(kLtoir), "callee.ltoir", In("callee.ltoir"), "-c"}};
  ProcessResult real = Run("herd-real", c, false);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  absl::StatusOr<DaemonStats> before = client_->Stats();
  ASSERT_TRUE(before.ok());
  constexpr int kProcesses = 8;
  std::vector<std::thread> herd;
  std::vector<ProcessResult> results(kProcesses);
  for (int i = 0; i < kProcesses; ++i) {
    herd.emplace_back(
        [&, i] { results[i] = Run(absl::StrCat("herd-", i), c, true); });
  }
  for (std::thread& t : herd) t.join();
  for (int i = 0; i < kProcesses; ++i) {
    EXPECT_EQ(results[i].exit_code, 0) << results[i].output;
    ExpectSame("herd-real", absl::StrCat("herd-", i), absl::StrCat("herd ", i));
  }
  absl::StatusOr<DaemonStats> after = client_->Stats();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->compiles, before->compiles + 1);
}

// A process whose real nvJitLink would be another file than the daemon's
// (another toolkit, another copy) never takes the daemon's answers: they
// are that other library's.
TEST_F(NvJitLinkDifferential, AnotherNvJitLinkThanTheDaemonsIsNeverAnswered) {
  const std::string copy = dir_.Sub("libnvJitLink.so.13");
  std::filesystem::copy_file(
      std::string(getenv("CUDA_HOME") ? getenv("CUDA_HOME")
                                      : "/usr/local/cuda") +
          "/lib64/libnvJitLink.so.13",
      copy);
  const Case c{
      "other-copy",
      {"-o", "-arch=sm_90", "-o", "-lto", "-a", std::to_string(kLtoir),
       "caller.ltoir", In("caller.ltoir"), "-a", std::to_string(kLtoir),
       "callee.ltoir", In("callee.ltoir"), "-c"}};
  ProcessResult real = Run("other-real", c, false);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  absl::StatusOr<DaemonStats> before = client_->Stats();
  ASSERT_TRUE(before.ok());
  for (int run = 0; run < 2; ++run) {
    ProcessResult ours = Run(absl::StrCat("other-", run), c, true,
                             {"JITCACHE_REAL_NVJITLINK=" + copy});
    ASSERT_EQ(ours.exit_code, 0) << ours.output;
    EXPECT_TRUE(absl::StrContains(ours.output, "not using the daemon"))
        << ours.output;
    ExpectSame("other-real", absl::StrCat("other-", run), "another copy");
  }
  absl::StatusOr<DaemonStats> after = client_->Stats();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->link_requests, before->link_requests);
}

// Options whose answers hold the moment (-time, and the "Compile time"
// line of -verbose and ptxas's -v) are never answered from a record: the
// real nvJitLink links them, in the caller's process, every time.
TEST_F(NvJitLinkDifferential, TimingsAreLeftToTheRealNvJitLink) {
  for (const std::string option : {"-time", "-verbose", "-Xptxas=-v"}) {
    const Case c{
        option,
        {"-o", "-arch=sm_90", "-o", "-lto", "-o", option, "-a",
         std::to_string(kLtoir), "caller.ltoir", In("caller.ltoir"), "-a",
         std::to_string(kLtoir), "callee.ltoir", In("callee.ltoir"), "-c"}};
    for (int run = 0; run < 2; ++run) {
      const std::string out = absl::StrCat("timed-", option, "-", run);
      ProcessResult ours = Run(out, c, true);
      ASSERT_EQ(ours.exit_code, 0) << ours.output;
      EXPECT_TRUE(absl::StrContains(ours.output, "the real nvJitLink"))
          << option << ": " << ours.output;
      EXPECT_FALSE(testing::ReadFile(dir_.Sub(out + "/linked.cubin")).empty())
          << option;
    }
  }
}

// ptxas's options file, named through -Xptxas, is the caller's: the real
// nvJitLink reads it in the caller's place, every time (a record would
// answer with the file as it was, or as the daemon could not open it).
TEST_F(NvJitLinkDifferential, PtxasOptionsFilesAreLeftToTheRealNvJitLink) {
  for (const std::string spelled : {"--options-file=", "-optf="}) {
    const std::string option = "-Xptxas=" + spelled + dir_.Sub("ptxas.opts");
    const Case c{spelled,
                 {"-o", "-arch=sm_90", "-o", option, "-a", std::to_string(kPtx),
                  "caller.ptx", In("caller.ptx"), "-a", std::to_string(kPtx),
                  "callee.ptx", In("callee.ptx"), "-c"}};
    for (const char* contents : {"-O1\n", "--bogus-option\n"}) {
      SCOPED_TRACE(spelled + contents);
      testing::WriteFile(dir_.Sub("ptxas.opts"), contents);
      ASSERT_EQ(Run("opts-real", c, false).exit_code, 0);
      for (int run = 0; run < 2; ++run) {
        const std::string out = absl::StrCat("opts-", run);
        ProcessResult ours = Run(out, c, true);
        ASSERT_EQ(ours.exit_code, 0) << ours.output;
        ExpectSame("opts-real", out, option);
      }
    }
  }
}

// The library is preloaded into every process of a job: it loads nothing
// but the C and C++ runtimes (no gRPC, protobuf, Abseil or libcrypto).
TEST(JitcacheNvJitLink, LoadsNothingButTheCAndCxxRuntimes) {
  const std::string shim =
      std::string(JITCACHE_NVJITLINK_DIR) + "/libnvJitLink.so.13";
  const testing::LoadedLibraries loaded =
      testing::LibrariesLoadedBy({"/bin/true"}, {"LD_PRELOAD=" + shim});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  ASSERT_TRUE(absl::StrContains(loaded.output, shim)) << loaded.output;
  EXPECT_GE(loaded.all.size(), 2u) << loaded.output;
  EXPECT_TRUE(loaded.beyond_the_runtimes.empty()) << loaded.output;
}

// Bytes past `size`: the real nvJitLink reads fatbins, host objects and
// libraries by their container's own length, past a shorter `size`, and
// takes PTX only with a NUL at its last byte or just past it. Each case, as
// the real nvJitLink answers it, through ours without a daemon (which once
// handed nvJitLink a copy of `size` bytes and hung or crashed), then with
// one, twice: inputs read past their size go to the real nvJitLink with
// the caller's own bytes; the rest are the daemon's, the second time a hit.
TEST_F(NvJitLinkDifferential,
       BytesPastTheSizeAreReadAsTheRealNvJitLinkReadsThem) {
  constexpr int kFatbin = 4, kObject = 5, kLibrary = 6;
  const char* cuda = std::getenv("CUDA_HOME");
  const std::string bin =
      std::string(cuda != nullptr ? cuda : "/usr/local/cuda") + "/bin/";
  const std::string callee =
      "__device__ float f(float v) { return v * v + 1.0f; }\n";
  testing::WriteFile(In("callee.cu"), callee);
  // The containers as nvcc, fatbinary and ar make them.
  for (const std::vector<std::string>& tool :
       {std::vector<std::string>{
            bin + "fatbinary", "--create=" + In("callee.fatbin"), "-64",
            "--image3=kind=elf,sm=90,file=" + In("callee.cubin")},
        std::vector<std::string>{bin + "nvcc", "-arch=sm_90", "-rdc=true", "-c",
                                 In("callee.cu"), "-o", In("callee.o")},
        std::vector<std::string>{"/usr/bin/ar", "rcs", In("libcallee.a"),
                                 In("callee.o")}}) {
    ProcessResult made = testing::RunProcess(tool);
    ASSERT_EQ(made.exit_code, 0) << tool[0] << ": " << made.output;
  }
  // PTX whose size ends before a newline: no NUL at its end nor past it;
  // and the same with a NUL just past it.
  std::string ptx = testing::ReadFile(In("callee.ptx"));
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  testing::WriteFile(In("open.ptx"), ptx + "\n");
  testing::WriteFile(In("closed.ptx"), ptx + std::string(1, '\0'));

  struct Shortened {
    std::string name;
    std::vector<std::string> add;  // after the caller's PTX
    bool read_past = false;        // the real nvJitLink reads past `size`
  };
  auto shorter = [&](int type, const std::string& file, int by) {
    return std::vector<std::string>{"-s", std::to_string(type), file, In(file),
                                    std::to_string(by)};
  };
  const std::vector<Shortened> cases = {
      {"fatbin", Add(kFatbin, "callee.fatbin", In("callee.fatbin"))},
      {"fatbin-short", shorter(kFatbin, "callee.fatbin", 100), true},
      {"object", Add(kObject, "callee.o", In("callee.o"))},
      {"object-short", shorter(kObject, "callee.o", 100), true},
      {"library", Add(kLibrary, "libcallee.a", In("libcallee.a"))},
      {"library-short", shorter(kLibrary, "libcallee.a", 100), true},
      {"ptx-open", shorter(kPtx, "open.ptx", 1), true},
      {"ptx-nul-past", shorter(kPtx, "closed.ptx", 1)},
  };
  for (const Shortened& s : cases) {
    SCOPED_TRACE(s.name);
    Case c{s.name,
           {"-o", "-arch=sm_90", "-a", std::to_string(kPtx), "caller.ptx",
            In("caller.ptx")}};
    c.steps.insert(c.steps.end(), s.add.begin(), s.add.end());
    c.steps.push_back("-c");
    ProcessResult real = Run(s.name + "-real", c, false);
    ASSERT_EQ(real.exit_code, 0) << real.output;
    ProcessResult alone = Run(s.name + "-alone", c, true,
                              {"JITCACHE_SOCKET=" + dir_.Sub("none.sock")});
    EXPECT_EQ(alone.exit_code, 0) << alone.output;
    ExpectSame(s.name + "-real", s.name + "-alone", "without a daemon");
    for (const char* run : {"-miss", "-again"}) {
      ProcessResult ours = Run(s.name + run, c, true);
      EXPECT_EQ(ours.exit_code, 0) << ours.output;
      ExpectSame(s.name + "-real", s.name + run, run);
      EXPECT_EQ(absl::StrContains(ours.output, "read past its size"),
                s.read_past)
          << ours.output;
    }
    if (!s.read_past) {
      ProcessResult hit = Run(s.name + "-hit", c, true);
      EXPECT_FALSE(absl::StrContains(hit.output, "the real nvJitLink"))
          << hit.output;
    }
  }
}

// What the real nvJitLink writes on standard error (13.0: a definition
// made twice, named by its inputs, while the second is added) is written on
// the caller's by a hit too, call by call; and it names the inputs, so
// another naming is linked again.
TEST_F(NvJitLinkDifferential, StandardErrorIsTheRealNvJitLinksToo) {
  auto stderr_of = [](const ProcessResult& r) {
    std::string out;
    for (absl::string_view line : absl::StrSplit(r.output, '\n')) {
      // The driver's stdout (its mapped libraries) and our own notes.
      if (line.empty() || absl::StartsWith(line, "mapped ") ||
          absl::StartsWith(line, "jitcache ")) {
        continue;
      }
      absl::StrAppend(&out, line, "\n");
    }
    return out;
  };
  auto twice = [&](const std::string& second) {
    return Case{"defined-twice-" + second,
                {"-o", "-arch=sm_90", "-a", std::to_string(kPtx), "caller.ptx",
                 In("caller.ptx"), "-a", std::to_string(kPtx), "callee.ptx",
                 In("callee.ptx"), "-a", std::to_string(kPtx), second,
                 In("callee.ptx"), "-c"}};
  };
  const Case c = twice("again.ptx");
  ProcessResult real = Run(c.name + "-real", c, false);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  ASSERT_TRUE(absl::StrContains(stderr_of(real), "Multiple definition"))
      << real.output;
  for (const char* run : {"-miss", "-hit"}) {
    ProcessResult ours = Run(c.name + run, c, true);
    EXPECT_EQ(stderr_of(ours), stderr_of(real)) << run << ": " << ours.output;
    ExpectSame(c.name + "-real", c.name + run, run);
  }
  ProcessResult hit = Run(c.name + "-hit2", c, true);
  EXPECT_FALSE(absl::StrContains(hit.output, "the real nvJitLink"))
      << hit.output;
  EXPECT_EQ(stderr_of(hit), stderr_of(real));
  // Another name for the twice-defined input: its own message.
  ASSERT_TRUE(testing::ProofsSettled(daemon_.socket()));
  const Case renamed = twice("other.ptx");
  ProcessResult real2 = Run(renamed.name + "-real", renamed, false);
  ProcessResult ours2 = Run(renamed.name + "-ours", renamed, true);
  EXPECT_TRUE(absl::StrContains(stderr_of(real2), "other.ptx"));
  EXPECT_EQ(stderr_of(ours2), stderr_of(real2)) << ours2.output;
  ExpectSame(renamed.name + "-real", renamed.name + "-ours", "renamed");
}

// nvJitLinkAddFile: the file read and named as the real nvJitLink reads
// and names it, for each type (NVJITLINK_INPUT_ANY too) and by every
// spelling of its path, and cached; a file that is not there, a directory
// and an empty file are the real one's.
TEST_F(NvJitLinkDifferential, AddedFilesAreTheRealNvJitLinksAndHit) {
  constexpr int kAny = 10;
  testing::WriteFile(In("empty.ptx"), "");
  mkdir(In("a-directory").c_str(), 0700);
  struct FileCase {
    std::string name;
    std::vector<std::string> steps;
    bool hits = true;
  };
  auto file = [](int type, const std::string& path) {
    return std::vector<std::string>{"-f", std::to_string(type), path};
  };
  auto link = [&](std::vector<std::string> options,
                  std::vector<std::vector<std::string>> adds) {
    std::vector<std::string> out;
    for (const std::string& o : options) out.insert(out.end(), {"-o", o});
    for (const auto& a : adds) out.insert(out.end(), a.begin(), a.end());
    out.push_back("-c");
    return out;
  };
  const std::vector<FileCase> cases = {
      {"lto-files",
       link({"-arch=sm_90", "-lto"}, {file(kLtoir, In("caller.ltoir")),
                                      file(kLtoir, In("callee.ltoir"))})},
      {"ptx-files", link({"-arch=sm_90"}, {file(kPtx, In("caller.ptx")),
                                           file(kPtx, In("callee.ptx"))})},
      {"file-and-data",
       link({"-arch=sm_90"}, {Add(kPtx, "caller.ptx", In("caller.ptx")),
                              file(kCubin, In("callee.cubin"))})},
      // The wrong type: the log names the file as spelled.
      {"wrong-type", link({"-arch=sm_90"}, {file(kCubin, In("caller.ptx"))})},
      {"missing", link({"-arch=sm_90"}, {file(kPtx, In("no-such.ptx"))}),
       false},
      {"directory", link({"-arch=sm_90"}, {file(kPtx, In("a-directory"))}),
       false},
      {"empty", link({"-arch=sm_90"}, {file(kPtx, In("empty.ptx"))}), false},
      // NVJITLINK_INPUT_ANY: the real nvJitLink types such a file by its
      // bytes, not by its name (PTX named .cubin, a cubin named .ltoir link
      // as what they are), and so does the daemon's, handed them as ANY.
      {"any", link({"-arch=sm_90"}, {file(kAny, In("caller.ptx"))})},
      {"any-misnamed",
       link({"-arch=sm_90"}, {file(kAny, In("caller-ptx.cubin")),
                              file(kAny, In("callee-cubin.ltoir"))})},
      {"any-lto",
       link({"-arch=sm_90", "-lto"},
            {file(kAny, In("caller.ltoir")), file(kAny, In("callee.ltoir"))})},
      {"any-garbage", link({"-arch=sm_90"}, {file(kAny, In("garbage")),
                                             file(kPtx, In("callee.ptx"))})},
  };
  testing::WriteFile(In("caller-ptx.cubin"),
                     testing::ReadFile(In("caller.ptx")));
  testing::WriteFile(In("callee-cubin.ltoir"),
                     testing::ReadFile(In("callee.cubin")));
  for (const FileCase& f : cases) {
    SCOPED_TRACE(f.name);
    const Case c{f.name, f.steps};
    ProcessResult real = Run(f.name + "-real", c, false);
    ASSERT_EQ(real.exit_code, 0) << real.output;
    if (f.name == "any-misnamed") {
      EXPECT_TRUE(absl::StrContains(
          testing::ReadFile(dir_.Sub(f.name + "-real/report")), "complete: 0"));
    }
    for (const char* run : {"-miss", "-hit"}) {
      ProcessResult ours = Run(f.name + run, c, true);
      EXPECT_EQ(ours.exit_code, 0) << ours.output;
      ExpectSame(f.name + "-real", f.name + run, run);
    }
    ProcessResult again = Run(f.name + "-again", c, true);
    EXPECT_EQ(absl::StrContains(again.output, "the real nvJitLink"), !f.hits)
        << again.output;
  }
  // A file changed between links is read again: the new bytes' answer.
  const Case changing{"changing",
                      link({"-arch=sm_90"}, {file(kPtx, In("caller.ptx")),
                                             file(kPtx, In("changing.ptx"))})};
  testing::WriteFile(In("changing.ptx"), testing::ReadFile(In("callee.ptx")));
  Run("changing-ours1", changing, true);
  testing::WriteFile(In("changing.ptx"), testing::ReadFile(In("bad.ptx")));
  ProcessResult real = Run("changing-real", changing, false);
  ProcessResult ours = Run("changing-ours2", changing, true);
  ExpectSame("changing-real", "changing-ours2", "changed");
}

// PTX with line information names its source files (`.file`): the real
// nvJitLink stats each where it runs and writes its size and time into the
// cubin. The library sends what the caller's stat says of each, the key
// holds it and the daemon's link sees files that say the same: a second
// process is a hit with the real nvJitLink's cubin, and once the source is
// touched, a miss with the real one's new cubin, then a hit again. A
// source named relative to the working directory (a link has none) stays
// the caller's.
TEST_F(NvJitLinkDifferential, SourceFilesThePtxNamesAreKeyedByTheirStats) {
  const std::string source = In("lined.cu");
  testing::WriteFile(source,
                     "__device__ float f(float v) { return v * v + 1.0f; }\n");
  ProgramOptions options;
  options.arch = "compute_90";
  options.relocatable_device_code = true;
  options.lineinfo = true;
  options.wait_for_proof = true;
  absl::StatusOr<ObjectCode> code = client_->Compile(
      Program(testing::ReadFile(source), source), options, CodeType::kPtx);
  ASSERT_TRUE(code.ok()) << code.status();
  ASSERT_TRUE(absl::StrContains(code->bytes.str(), ".file")) << code->bytes;
  testing::WriteFile(In("lined.ptx"), code->bytes);
  const Case c{"lined",
               {"-o", "-arch=sm_90", "-o", "-lineinfo", "-a",
                std::to_string(kPtx), "caller.ptx", In("caller.ptx"), "-a",
                std::to_string(kPtx), "lined.ptx", In("lined.ptx"), "-c"}};
  for (const char* when : {"before", "after"}) {
    if (std::string(when) == "after") {
      // Another time on the source: the real nvJitLink's cubin differs.
      const auto t = std::filesystem::last_write_time(source);
      std::filesystem::last_write_time(source, t - std::chrono::hours(24));
    }
    ProcessResult real = Run(absl::StrCat("lined-real-", when), c, false);
    ASSERT_EQ(real.exit_code, 0) << real.output;
    for (const char* run : {"-1", "-2"}) {
      const std::string out = absl::StrCat("lined-ours-", when, run);
      ProcessResult ours = Run(out, c, true);
      ExpectSame(absl::StrCat("lined-real-", when), out, out);
      EXPECT_FALSE(absl::StrContains(ours.output, "naming source files"))
          << ours.output;
      if (std::string(run) == "-2") {
        EXPECT_FALSE(absl::StrContains(ours.output, "the real nvJitLink"))
            << "answered by the daemon: " << ours.output;
      }
    }
  }
  EXPECT_NE(testing::ReadFile(In("lined-real-before/linked.cubin")),
            testing::ReadFile(In("lined-real-after/linked.cubin")))
      << "the source's time is not in the cubin: the test shows nothing";

  // The same PTX naming its source relative to the working directory.
  std::string relative = testing::ReadFile(In("lined.ptx"));
  const size_t at = relative.find(source);
  ASSERT_NE(at, std::string::npos) << relative;
  relative.replace(at, source.size(), "lined.cu");
  testing::WriteFile(In("relative.ptx"), relative);
  const Case r{
      "relative",
      {"-o", "-arch=sm_90", "-o", "-lineinfo", "-a", std::to_string(kPtx),
       "caller.ptx", In("caller.ptx"), "-a", std::to_string(kPtx),
       "relative.ptx", In("relative.ptx"), "-c"}};
  ProcessResult real = Run("relative-real", r, false);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  ProcessResult ours = Run("relative-ours", r, true);
  ExpectSame("relative-real", "relative-ours", "relative");
  EXPECT_TRUE(absl::StrContains(ours.output, "naming source files"))
      << ours.output;
}

// LTO-IR with line information (NVRTC's -lineinfo, as numba-cuda and
// nvcc -dlto -lineinfo make it) names its source files too, inside the
// IR, where the library cannot read them: the real nvJitLink stats each
// where it runs and writes its size and time into the cubin. The daemon's
// worker sees that its link stat'ed files (none of which are in its view)
// and refuses it, and remembers the link: the caller links it itself, the
// same cubin as the real one's before and after the source is touched.
TEST_F(NvJitLinkDifferential, SourceFilesTheLtoIrNamesAreTheCallers) {
  // The kernel's own source: its lines survive the link (a device function
  // inlined into another file's kernel leaves none).
  const std::string source = In("lined_caller.cu");
  testing::WriteFile(source,
                     "extern __device__ float f(float);\n"
                     "extern \"C\" __global__ void k(float* x) "
                     "{ x[threadIdx.x] = f(x[threadIdx.x]); }\n");
  ProgramOptions options;
  options.arch = "sm_90";
  options.relocatable_device_code = true;
  options.lineinfo = true;
  options.wait_for_proof = true;
  absl::StatusOr<ObjectCode> code = client_->Compile(
      Program(testing::ReadFile(source), source), options, CodeType::kLtoir);
  ASSERT_TRUE(code.ok()) << code.status();
  testing::WriteFile(In("lined.ltoir"), code->bytes);
  const Case c{
      "lined-lto",
      {"-o", "-arch=sm_90", "-o", "-lto", "-o", "-lineinfo", "-a",
       std::to_string(kLtoir), "lined.ltoir", In("lined.ltoir"), "-a",
       std::to_string(kLtoir), "callee.ltoir", In("callee.ltoir"), "-c"}};
  for (const char* when : {"before", "after"}) {
    if (std::string(when) == "after") {
      const auto t = std::filesystem::last_write_time(source);
      std::filesystem::last_write_time(source, t - std::chrono::hours(24));
    }
    ProcessResult real = Run(absl::StrCat("lined-lto-real-", when), c, false);
    ASSERT_EQ(real.exit_code, 0) << real.output;
    for (const char* run : {"-1", "-2"}) {
      const std::string out = absl::StrCat("lined-lto-ours-", when, run);
      ProcessResult ours = Run(out, c, true);
      ExpectSame(absl::StrCat("lined-lto-real-", when), out, out);
      // Refused, and told why, in the daemon's words (FramedRefusal).
      EXPECT_TRUE(absl::StrContains(
          ours.output, "the daemon refused it: the link stats files by path"))
          << ours.output;
    }
  }
  EXPECT_TRUE(testing::ReadFile(In("lined-lto-real-before/linked.cubin")) !=
              testing::ReadFile(In("lined-lto-real-after/linked.cubin")))
      << "the source's time is not in the cubin: the test shows nothing";
  // Linked by the daemon once, then refused at once: four callers, one
  // refusal by a worker in the daemon's log.
  const std::string log = daemon_.Log();
  size_t refusals = 0;
  for (size_t at = log.find("stats files by path"); at != std::string::npos;
       at = log.find("stats files by path", at + 1)) {
    ++refusals;
  }
  EXPECT_EQ(refusals, 1u) << log;
}

// A record that a caller's own nvJitLink answers otherwise is checked by
// linking again, removed when that says so too, counted, and never served
// again. The fault worker's first JITCACHE_FAULT_WRONG_ONCE link adds a
// line to nvJitLinkCreate's info log: the first caller's real nvJitLink
// answered that call without it, so it completes the link itself and
// disproves the record; the daemon's second link agrees with the caller.
// Without the removal, the next caller's nvJitLinkCreate is answered from
// the wrong record.
TEST_F(NvJitLinkDifferential, ARecordACallerDisprovesIsRemovedAndNeverServed) {
  testing::DaemonProcess faulty(
      dir_.Sub("faulty.sock"), ":memory:",
      {std::string("--worker_binary=") + JITCACHE_FAULT_WORKER, "--workers=1",
       "--place_proofs=false"});
  ASSERT_TRUE(faulty.Start().ok()) << faulty.Log();
  const Case c{
      "disproved",
      {"-o", "-arch=sm_90", "-o", "-lto", "-o",
       "-kernels-used=JITCACHE_FAULT_WRONG_ONCE", "-a", std::to_string(kLtoir),
       "caller.ltoir", In("caller.ltoir"), "-a", std::to_string(kLtoir),
       "callee.ltoir", In("callee.ltoir"), "-c"}};
  ProcessResult real = Run("disproved-real", c, false);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  const std::vector<std::string> env = {"JITCACHE_SOCKET=" + faulty.socket()};
  ProcessResult first = Run("disproved-1", c, true, env);
  ExpectSame("disproved-real", "disproved-1", "first caller");
  EXPECT_TRUE(absl::StrContains(first.output, "answered an earlier call"))
      << first.output;
  const bool removed = testing::WaitFor(
      [&] { return testing::StatsOf(faulty.socket()).records_disproved == 1; },
      absl::Minutes(2));
  ASSERT_TRUE(removed) << faulty.Log();
  ProcessResult second = Run("disproved-2", c, true, env);
  ExpectSame("disproved-real", "disproved-2", "after the removal");
  // Linked again (right, this time) and kept: the next caller's link is
  // the daemon's answer alone.
  ProcessResult third = Run("disproved-3", c, true, env);
  ExpectSame("disproved-real", "disproved-3", "the new record");
  EXPECT_FALSE(absl::StrContains(third.output, "the real nvJitLink"))
      << third.output;
  const DaemonStats stats = testing::StatsOf(faulty.socket());
  EXPECT_EQ(stats.records_disproved, 1u);
  EXPECT_EQ(stats.disproofs_refuted, 0u);
}

// The library asks nothing but the daemon's framed socket: without one (a
// daemon run with --hit_socket=false, or none at all) the real nvJitLink
// links, with the same result, and the daemon sees no link.
TEST_F(NvJitLinkDifferential,
       WithoutTheDaemonsFramedSocketTheRealNvJitLinkLinks) {
  testing::DaemonProcess plain(dir_.Sub("plain.sock"),
                               ":memory:", {"--hit_socket=false"});
  ASSERT_TRUE(plain.Start().ok()) << plain.Log();
  const Case c{
      "no-hits",
      {"-o", "-arch=sm_90", "-o", "-lto", "-a", std::to_string(kLtoir),
       "caller.ltoir", In("caller.ltoir"), "-a", std::to_string(kLtoir),
       "callee.ltoir", In("callee.ltoir"), "-c"}};
  ProcessResult real = Run("no-hits-real", c, false);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  int run = 0;
  for (const std::string& socket : {plain.socket(), dir_.Sub("none.sock")}) {
    const std::string out = absl::StrCat("no-hits-", run++);
    ProcessResult ours = Run(out, c, true, {"JITCACHE_SOCKET=" + socket});
    ASSERT_EQ(ours.exit_code, 0) << ours.output;
    EXPECT_TRUE(absl::StrContains(ours.output, "not using the daemon"))
        << ours.output;
    ExpectSame("no-hits-real", out, socket);
  }
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = plain.socket()});
  ASSERT_TRUE(client.ok());
  absl::StatusOr<DaemonStats> stats = client->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->link_requests, 0u);
}

// NVJITLINK_TRACE_MESSAGES makes the real nvJitLink add trace lines to its
// logs. A caller with it set gets them (the real nvJitLink answers in its
// process); a daemon started with it keeps none of them in its records.
TEST_F(NvJitLinkDifferential, TraceMessagesAreTheCallersAlone) {
  const Case c{
      "trace",
      {"-o", "-arch=sm_90", "-o", "-lto", "-a", std::to_string(kLtoir),
       "caller.ltoir", In("caller.ltoir"), "-a", std::to_string(kLtoir),
       "callee.ltoir", In("callee.ltoir"), "-c"}};
  const std::vector<std::string> traced = {"NVJITLINK_TRACE_MESSAGES=1"};
  ASSERT_EQ(Run("plain-real", c, false).exit_code, 0);
  ASSERT_EQ(Run("traced-real", c, false, traced).exit_code, 0);
  ASSERT_NE(testing::ReadFile(dir_.Sub("plain-real/report")),
            testing::ReadFile(dir_.Sub("traced-real/report")))
      << "the variable changed nothing here: the case shows nothing";
  ProcessResult ours = Run("traced-ours", c, true, traced);
  EXPECT_TRUE(absl::StrContains(ours.output, "NVJITLINK_TRACE_MESSAGES"))
      << ours.output;
  ExpectSame("traced-real", "traced-ours", "the caller's trace messages");

  // A daemon whose own environment has it: its answers are the plain ones.
  setenv("NVJITLINK_TRACE_MESSAGES", "1", 1);
  testing::DaemonProcess daemon(dir_.Sub("traced.sock"), ":memory:");
  const absl::Status started = daemon.Start();
  unsetenv("NVJITLINK_TRACE_MESSAGES");
  ASSERT_TRUE(started.ok()) << daemon.Log();
  for (const char* run : {"daemon-traced-miss", "daemon-traced-hit"}) {
    ProcessResult answered =
        Run(run, c, true, {"JITCACHE_SOCKET=" + daemon.socket()});
    EXPECT_EQ(answered.exit_code, 0) << answered.output;
    ExpectSame("plain-real", run, run);
  }
}

// Raw link requests on the framed socket, as any local user may send them:
// only nvJitLink's calls as made (as_called) are answered; a link whose
// inputs the daemon lacks is not queued until their bytes come; timing
// options are refused on both sockets.
TEST_F(NvJitLinkDifferential, RawLinkRequestsOnTheFramedSocket) {
  const std::string caller = testing::ReadFile(In("caller.ltoir"));
  const std::string callee = testing::ReadFile(In("callee.ltoir"));
  auto request = [&](std::vector<std::string> options, bool with_bytes) {
    v1::LinkRequest r;
    r.set_as_called(true);
    for (const std::string& o : options) r.add_options(o);
    for (const std::string* bytes : {&caller, &callee}) {
      v1::LinkInput* in = r.add_inputs();
      in->set_kind(v1::OBJECT_KIND_LTOIR);
      in->set_name(bytes == &caller ? "caller" : "callee");
      if (with_bytes) {
        in->set_data(*bytes);
      } else {
        in->set_digest(Digest::Of(*bytes).Hex());
      }
    }
    return r;
  };
  FramedChannel channel(daemon_.socket());
  auto ask =
      [&](const v1::LinkRequest& r) -> std::optional<v1::CompileResponse> {
    std::string buffer;
    std::optional<std::string_view> bytes = channel.Ask(
        std::string(1, framed_protocol::kLink) + r.SerializeAsString(), buffer,
        std::chrono::minutes(2));
    if (!bytes.has_value()) return std::nullopt;
    v1::CompileResponse response;
    EXPECT_TRUE(response.ParseFromArray(bytes->data(),
                                        static_cast<int>(bytes->size())));
    return response;
  };
  // A fresh option makes a key no other test stored.
  const std::vector<std::string> options = {"-arch=sm_90", "-lto",
                                            "-maxrregcount=77"};
  // The LTO-IR the fixture compiled through the daemon is in its store:
  // emptied, the daemon lacks both inputs.
  ASSERT_TRUE(StoreAdmin::Connect(daemon_.socket()).Clear().ok());
  absl::StatusOr<DaemonStats> before = client_->Stats();
  ASSERT_TRUE(before.ok());

  v1::LinkRequest summary = request(options, true);
  summary.set_as_called(false);
  summary.set_target(v1::TARGET_CUBIN);
  EXPECT_FALSE(ask(summary).has_value()) << "only as called";
  // Named by digest alone: nothing is linked, nor stored.
  EXPECT_FALSE(ask(request(options, false)).has_value());
  absl::StatusOr<DaemonStats> lacking = client_->Stats();
  ASSERT_TRUE(lacking.ok());
  EXPECT_EQ(lacking->compiles, before->compiles);
  EXPECT_EQ(lacking->store_entries, before->store_entries);

  std::optional<v1::CompileResponse> linked = ask(request(options, true));
  ASSERT_TRUE(linked.has_value());
  EXPECT_EQ(linked->served(), v1::SERVED_MISS);
  EXPECT_TRUE(linked->link_trace().complete());
  EXPECT_EQ(linked->link_trace().steps_size(), 4);
  EXPECT_FALSE(linked->object().empty());
  // Now by digest alone: a hit, the same cubin; and its first steps.
  std::optional<v1::CompileResponse> hit = ask(request(options, false));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->served(), v1::SERVED_HIT);
  EXPECT_EQ(hit->object(), linked->object());
  v1::LinkRequest steps = request(options, false);
  steps.set_steps_only(true);
  steps.mutable_inputs()->RemoveLast();
  std::optional<v1::CompileResponse> first = ask(steps);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->link_trace().complete());
  EXPECT_EQ(first->link_trace().steps_size(), 2);
  absl::StatusOr<DaemonStats> after = client_->Stats();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->compiles, before->compiles + 1);

  // A record of -time would answer with another run's timings.
  const std::vector<std::string> timed = {"-arch=sm_90", "-lto", "-time"};
  EXPECT_FALSE(ask(request(timed, true)).has_value());
  auto stub = v1::JitCache::NewStub(grpc::CreateChannel(
      "unix://" + daemon_.socket(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::CompileResponse response;
  EXPECT_EQ(stub->Link(&context, request(timed, true), &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  absl::StatusOr<DaemonStats> end = client_->Stats();
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->compiles, after->compiles);
}

}  // namespace
}  // namespace jitcache
