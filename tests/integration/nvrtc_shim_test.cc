// The NVRTC-compatible library against the real NVRTC: the same C program
// (tests/testing/nvrtc_user.c), run once with the toolkit's libnvrtc and
// then with ours in front (LD_LIBRARY_PATH), must write the same PTX, cubin,
// LTO-IR and OptiX IR and print the same lowered names, whether the daemon
// answers or not.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::ProcessResult;

const char* const kOutputs[] = {"sm90.cubin", "sm90.ptx", "compute90.ptx",
                                "lto.ltoir", "optix.optixir"};

class NvrtcShim : public ::testing::Test {
 protected:
  // Runs the program into OUT (a new directory); through our library when
  // `socket` is given (empty: the daemon is down).
  ProcessResult Run(const std::string& out, std::optional<std::string> socket,
                    std::vector<std::string> extra = {},
                    const std::string& program_name = "",
                    const std::vector<std::string>& env = {}) {
    std::filesystem::create_directories(dir_.Sub(out));
    std::vector<std::string> argv = {"/usr/bin/env"};
    argv.insert(argv.end(), env.begin(), env.end());
    if (!program_name.empty()) {
      argv.push_back("JC_PROGRAM_NAME=" + program_name);
    }
    if (socket.has_value()) {
      argv.push_back(std::string("LD_LIBRARY_PATH=") + JITCACHE_NVRTC_DIR);
      argv.push_back("JITCACHE_SCAN_CACHE=" + dir_.Sub("scans"));
      argv.push_back("JITCACHE_SOCKET=" +
                     (socket->empty() ? dir_.Sub("nobody.sock") : *socket));
    }
    argv.push_back(JITCACHE_NVRTC_USER);
    argv.push_back(dir_.Sub(out));
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::RunProcess(argv);
  }

  void ExpectSameOutputs(const std::string& a, const std::string& b) {
    for (const char* name : kOutputs) {
      const std::string left = testing::ReadFile(dir_.Sub(a + "/" + name));
      EXPECT_FALSE(left.empty()) << name;
      EXPECT_TRUE(left == testing::ReadFile(dir_.Sub(b + "/" + name)))
          << name << " differs between " << a << " and " << b;
    }
  }

  testing::TempDir dir_;
};

TEST_F(NvrtcShim, SameBytesAsNvrtcTheSecondProcessHitsAndNoDaemonStillWorks) {
  ProcessResult real = Run("real", std::nullopt);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  ASSERT_TRUE(absl::StrContains(real.output, "lowered _Z5scaleIfEvPT_S0_"))
      << real.output;

  testing::DaemonProcess daemon(dir_.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});
  ProcessResult first = Run("first", daemon.socket());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output, real.output);
  ExpectSameOutputs("real", "first");
  DaemonStats after_first = *client->Stats();
  // cubin (then its PTX), PTX, LTO-IR, OptiX IR: five compiles, nothing
  // refused.
  EXPECT_EQ(after_first.misses, 5u);
  EXPECT_EQ(after_first.hits, 0u);

  ProcessResult second = Run("second", daemon.socket());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output, real.output);
  ExpectSameOutputs("real", "second");
  DaemonStats after_second = *client->Stats();
  EXPECT_EQ(after_second.hits, 5u);
  EXPECT_EQ(after_second.misses, 5u);

  daemon.Stop();
  ProcessResult alone = Run("alone", "");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_EQ(alone.output, real.output);
  ExpectSameOutputs("real", "alone");
}

// The library is preloaded into every process of a job: loading it maps
// nothing but the C and C++ runtimes, and neither do its misses (each
// compiled by the daemon, the answer a promise on the framed socket) nor
// its hits, include scan and all. The real NVRTC (nvrtcVersion forwards to
// it) is the one library it may add.
TEST_F(NvrtcShim, LoadsNothingButTheCAndCxxRuntimesHitOrMiss) {
  const std::string shim = std::string(JITCACHE_NVRTC_DIR) + "/libnvrtc.so.13";
  const testing::LoadedLibraries loaded =
      testing::LibrariesLoadedBy({"/bin/true"}, {"LD_PRELOAD=" + shim});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  ASSERT_TRUE(absl::StrContains(loaded.output, shim)) << loaded.output;
  EXPECT_TRUE(loaded.beyond_the_runtimes.empty()) << loaded.output;

  std::filesystem::create_directories(dir_.Sub("inc/lib"));
  testing::WriteFile(dir_.Sub("inc/lib/api.h"), "#define USER_FACTOR 2\n");
  testing::DaemonProcess daemon(dir_.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});
  for (const std::string run : {"misses", "hits"}) {
    ProcessResult done =
        Run(run, daemon.socket(), {"-I", dir_.Sub("inc")}, "", {"JC_MAPS=1"});
    ASSERT_EQ(done.exit_code, 0) << done.output;
    const std::string maps = testing::ReadFile(dir_.Sub(run + "/maps"));
    ASSERT_TRUE(absl::StrContains(maps, "libnvrtc.so.13")) << maps;
    for (const char* library :
         {"libgrpc", "libprotobuf", "libabsl", "libcrypto", "libssl"}) {
      EXPECT_FALSE(absl::StrContains(maps, library))
          << run << " mapped " << library << ":\n"
          << maps;
    }
  }
  DaemonStats stats = *client->Stats();
  EXPECT_EQ(stats.misses, 5u) << "the first process's compiles ran";
  EXPECT_EQ(stats.hits, 5u) << "the second process's were hits";
}

// Hits handed over as sealed memory files (every one, here) give the real
// NVRTC's bytes, names and logs, as those copied through the socket do.
TEST_F(NvrtcShim, HitsHandedOverAsSealedFilesAreTheRealNvrtcsToo) {
  ProcessResult real = Run("real", std::nullopt);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  testing::DaemonProcess daemon(dir_.Sub("jc.sock"),
                                ":memory:", {"--shared_answer_size=1"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});
  ProcessResult first = Run("first", daemon.socket());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ProcessResult second = Run("second", daemon.socket());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output, real.output);
  ExpectSameOutputs("real", "second");
  const DaemonStats stats = *client->Stats();
  EXPECT_EQ(stats.hits, 5u);
  EXPECT_EQ(stats.shared_answers, 5u) << "every hit went as a file";
}

// A process whose real NVRTC would be another file than the daemon's
// (another toolkit, another copy) never takes the daemon's answers: they
// are that other NVRTC's.
TEST_F(NvrtcShim, AnotherNvrtcThanTheDaemonsIsNeverAnswered) {
  ProcessResult real = Run("real", std::nullopt);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  const std::string lib = dir_.Sub("other-nvrtc");
  std::filesystem::create_directories(lib);
  const std::string toolkit =
      std::string(getenv("CUDA_HOME") ? getenv("CUDA_HOME")
                                      : "/usr/local/cuda") +
      "/lib64/";
  for (const char* name : {"libnvrtc.so.13", "libnvrtc-builtins.so.13.0"}) {
    std::filesystem::copy_file(toolkit + name, lib + "/" + name);
  }
  testing::DaemonProcess daemon(dir_.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});
  ASSERT_TRUE(client.ok());
  for (const char* out : {"other1", "other2"}) {
    ProcessResult ours = Run(out, daemon.socket(), {}, "",
                             {"JITCACHE_REAL_NVRTC=" + lib + "/libnvrtc.so.13",
                              "JITCACHE_NVRTC_VERBOSE=1"});
    ASSERT_EQ(ours.exit_code, 0) << ours.output;
    EXPECT_TRUE(absl::StrContains(ours.output, "not using the daemon"))
        << ours.output;
    ExpectSameOutputs("real", out);
  }
  absl::StatusOr<DaemonStats> stats = client->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->misses + stats->hits, 0u);
}

// A program that includes headers from an -I directory of its own: the
// daemon compiles it from the files the library sends (by content), with
// the same bytes as the real NVRTC, file names in -lineinfo and __FILE__
// included; a changed header is a miss, an unrelated file changes nothing.
TEST_F(NvrtcShim, IncludeDirectoriesAreKeyedByTheFilesIncluded) {
  const std::string inc = dir_.Sub("include");
  std::filesystem::create_directories(inc + "/lib/detail");
  testing::WriteFile(inc + "/lib/api.h",
                     "#pragma once\n#include \"detail/impl.h\"\n");
  // An include guard (the daemon's #line goes after it) and __LINE__.
  testing::WriteFile(inc + "/lib/detail/impl.h",
                     "/* impl */\n#ifndef IMPL_H\n#define IMPL_H\n"
                     "#include \"../config.h\"\n"
                     "#define USER_FACTOR (BASE_FACTOR * 1)\n"
                     "__device__ const char* impl_file = __FILE__;\n"
                     "__device__ int impl_line = __LINE__;\n#endif\n");
  testing::WriteFile(inc + "/lib/config.h",
                     "#define FACTOR_HEADER <lib/factor.h>\n"
                     "#include FACTOR_HEADER\n");
  testing::WriteFile(inc + "/lib/factor.h", "#define BASE_FACTOR 3\n");
  testing::WriteFile(inc + "/unrelated.h", "#error never included\n");
  const std::vector<std::string> include = {"-I", inc};

  ProcessResult real = Run("real", std::nullopt, include);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  EXPECT_TRUE(
      absl::StrContains(testing::ReadFile(dir_.Sub("real/sm90.ptx")), ".file"));
  testing::DaemonProcess daemon(dir_.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});

  ProcessResult first = Run("first", daemon.socket(), include);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output, real.output);
  ExpectSameOutputs("real", "first");
  EXPECT_EQ(client->Stats()->misses, 5u) << "none went to the real NVRTC";

  ProcessResult second = Run("second", daemon.socket(), include);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  ExpectSameOutputs("real", "second");
  EXPECT_EQ(client->Stats()->hits, 5u);

  // Files the program does not include, changed or new, change nothing.
  testing::WriteFile(inc + "/unrelated.h", "#error still never included\n");
  testing::WriteFile(inc + "/lib/new.h", "int new_file;\n");
  ProcessResult unrelated = Run("unrelated", daemon.socket(), include);
  ASSERT_EQ(unrelated.exit_code, 0) << unrelated.output;
  ExpectSameOutputs("real", "unrelated");
  EXPECT_EQ(client->Stats()->hits, 10u);
  EXPECT_EQ(client->Stats()->misses, 5u);

  // One byte in a header reached only through a macro #include.
  testing::WriteFile(inc + "/lib/factor.h", "#define BASE_FACTOR 4\n");
  ProcessResult real_changed = Run("real_changed", std::nullopt, include);
  ASSERT_EQ(real_changed.exit_code, 0) << real_changed.output;
  ProcessResult changed = Run("changed", daemon.socket(), include);
  ASSERT_EQ(changed.exit_code, 0) << changed.output;
  EXPECT_EQ(client->Stats()->misses, 10u);
  ExpectSameOutputs("real_changed", "changed");
  EXPECT_NE(testing::ReadFile(dir_.Sub("real/sm90.cubin")),
            testing::ReadFile(dir_.Sub("changed/sm90.cubin")));
}

// CuPy names each program by a fresh temporary directory (Python's
// tempfile: /tmp/tmpXXXXXXXX/kern.cu). NVRTC records the name where it
// writes line information or a diagnostic, and reads headers beside it:
// each gives the real NVRTC's bytes for its own name, and what the real
// NVRTC gives both alike is shared (the place proof, place_proof.h).
TEST_F(NvrtcShim, ProgramsInFreshTemporaryDirectoriesAreCompiledAsNamed) {
  testing::DaemonProcess daemon(dir_.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});
  const std::string a_name = dir_.Sub("tmpab_cd123/kern.cu");
  const std::string b_name = dir_.Sub("tmpzz9yy876/kern.cu");
  std::filesystem::create_directories(dir_.Sub("tmpab_cd123"));
  std::filesystem::create_directories(dir_.Sub("tmpzz9yy876"));
  ProcessResult a = Run("a", daemon.socket(), {}, a_name);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const uint64_t misses = client->Stats()->misses;
  EXPECT_GT(misses, 0u);
  ProcessResult b = Run("b", daemon.socket(), {}, b_name);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  for (const auto& [out, name] :
       {std::pair{"a", a_name}, std::pair{"b", b_name}}) {
    const std::string real = absl::StrCat("real-", out);
    ProcessResult r = Run(real, std::nullopt, {}, name);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ExpectSameOutputs(real, out);
  }
  // What the real NVRTC gives both names alike, the second directory's
  // compiles take from the first's; the rest they compile for their own.
  bool same = true;
  for (const char* name : kOutputs) {
    same =
        same && testing::ReadFile(dir_.Sub(std::string("real-a/") + name)) ==
                    testing::ReadFile(dir_.Sub(std::string("real-b/") + name));
  }
  const DaemonStats stats = *client->Stats();
  EXPECT_GT(stats.hits, 0u) << "nothing shared";
  EXPECT_EQ(stats.hits + stats.misses, 2 * misses);
  if (same) {
    EXPECT_EQ(stats.misses, misses);
  }
}

// What the include scan cannot give the daemon (here a macro #include no
// #define names) goes to the real NVRTC, with the same results.
TEST_F(NvrtcShim, WhatTheDaemonCannotTakeTheRealNvrtcCompiles) {
  const std::string inc = dir_.Sub("include");
  std::filesystem::create_directories(inc + "/lib");
  testing::WriteFile(inc + "/lib/api.h",
                     "#ifdef NEVER\n#include NEVER_HEADER\n#endif\n"
                     "#define USER_FACTOR 3\n");
  const std::vector<std::string> include = {"-I", inc};
  ProcessResult real = Run("real", std::nullopt, include);
  ASSERT_EQ(real.exit_code, 0) << real.output;
  testing::DaemonProcess daemon(dir_.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  ProcessResult shim = Run("shim", daemon.socket(), include);
  ASSERT_EQ(shim.exit_code, 0) << shim.output;
  EXPECT_EQ(shim.output, real.output);
  ExpectSameOutputs("real", "shim");
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});
  EXPECT_EQ(client->Stats()->misses, 0u);
}

// NVRTC keeps state between compiles of one process: after -restrict, a
// later compile without it still loads through ld.global.nc. One worker
// serves every compile here; each must come out as the real NVRTC's does
// in a fresh process (tests/testing/nvrtc_case.c, one process per case),
// result code, log and PTX alike.
TEST_F(NvrtcShim, NoCompileSeesTheStateAnEarlierOneLeftInNvrtc) {
  const std::string kernel = dir_.Sub("rs.cu");
  testing::WriteFile(
      kernel,
      "extern \"C\" __global__ void rs(float* a, float* b, int n) {\n"
      "  for (int i = 0; i < n; ++i) a[i] += b[i] * b[i + 1];\n"
      "}\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"restrict", "-restrict"},
      {"fresh", "-DFRESH=1"},
      {"restrict-again", "-restrict"},
      {"fresh-again", "-DFRESH=2"}};
  std::string text;
  for (const auto& [id, option] : cases) {
    absl::StrAppend(&text, "case ", id, "\nname rs.cu\nsource ", kernel,
                    "\nopt -arch=compute_90\nopt ", option, "\nend\n");
  }
  const std::string case_file = dir_.Sub("state.cases");
  testing::WriteFile(case_file, text);
  for (const char* out : {"real", "ours"}) {
    std::filesystem::create_directories(dir_.Sub(out));
  }
  for (const auto& [id, option] : cases) {
    ProcessResult real = testing::RunProcess(
        {JITCACHE_NVRTC_CASE, case_file, dir_.Sub("real"), id});
    ASSERT_EQ(real.exit_code, 0) << real.output;
  }

  testing::DaemonProcess daemon(dir_.Sub("jc.sock"),
                                ":memory:", {"--workers=1"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  ProcessResult ours = testing::RunProcess(
      {"/usr/bin/env", std::string("LD_LIBRARY_PATH=") + JITCACHE_NVRTC_DIR,
       "JITCACHE_SCAN_CACHE=" + dir_.Sub("scans"),
       "JITCACHE_SOCKET=" + daemon.socket(), JITCACHE_NVRTC_CASE, case_file,
       dir_.Sub("ours")});
  ASSERT_EQ(ours.exit_code, 0) << ours.output;

  // Up to the LTO-IR: this library still answers LTO-IR queries without
  // -dlto differently (issue 18), which is not what this test is about.
  auto observed = [&](const std::string& out, const std::string& id) {
    const std::string all = testing::ReadFile(dir_.Sub(out + "/" + id));
    return all.substr(0, all.find("\nltoir "));
  };
  for (const auto& [id, option] : cases) {
    const std::string want = observed("real", id);
    ASSERT_TRUE(absl::StrContains(want, "\nptx 0 ")) << want;
    EXPECT_TRUE(want == observed("ours", id))
        << id << " (" << option << ") differs from the real NVRTC's";
  }
  EXPECT_FALSE(absl::StrContains(observed("real", "fresh"), "ld.global.nc"));
  EXPECT_TRUE(absl::StrContains(observed("real", "restrict"), "ld.global.nc"));
}

}  // namespace
}  // namespace jitcache
