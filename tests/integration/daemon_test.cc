// The real daemon (a child process) on a temporary socket, with a RocksDB
// store in a temporary directory and the real NVRTC.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kernels.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class DaemonTest : public testing::DaemonFixture {
 protected:
  absl::StatusOr<ObjectCode> Compile(const Program& program,
                                     const ProgramOptions& options,
                                     CodeType target) {
    return client_->Compile(program, options, target);
  }

  // The daemon still answers and still compiles.
  void ExpectServing() {
    EXPECT_TRUE(client_->Ping().ok());
    ProgramOptions options;
    auto code =
        Compile(Program(kernels::kSaxpy, "saxpy.cu"), options, CodeType::kPtx);
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_TRUE(code->compiled);
  }
};

TEST_F(DaemonTest, EachTargetMissesThenHitsWithIdenticalBytes) {
  struct Case {
    CodeType target;
    std::string arch;
  };
  for (const Case& c :
       {Case{CodeType::kPtx, ""}, Case{CodeType::kCubin, "sm_90"},
        Case{CodeType::kLtoir, "sm_90"}}) {
    ProgramOptions options;
    options.arch = c.arch;
    // The miss names the key the hit names (not its place's while the
    // place proof runs).
    options.wait_for_proof = true;
    auto first =
        Compile(Program(kernels::kSaxpy, "saxpy.cu"), options, c.target);
    auto second =
        Compile(Program(kernels::kSaxpy, "saxpy.cu"), options, c.target);
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE(second.ok()) << second.status();
    SCOPED_TRACE(std::string(CodeTypeName(c.target)));
    EXPECT_TRUE(first->compiled) << first->log;
    EXPECT_EQ(first->served, Served::kMiss);
    EXPECT_EQ(second->served, Served::kHit);
    EXPECT_EQ(second->bytes, first->bytes);
    EXPECT_EQ(second->cache_key, first->cache_key);
    EXPECT_GT(second->compile_time_us, 0);
    switch (c.target) {
      case CodeType::kPtx:
        EXPECT_THAT(first->bytes, HasSubstr(".entry saxpy"));
        break;
      case CodeType::kCubin:
        EXPECT_THAT(first->bytes, StartsWith("\x7f"
                                             "ELF"));
        break;
      case CodeType::kLtoir:
        EXPECT_GT(first->bytes.size(), 16u);
        EXPECT_THAT(first->bytes, ::testing::Not(HasSubstr(".entry saxpy")));
        break;
      default:
        FAIL() << "not a compile target";
    }
  }
}

TEST_F(DaemonTest, RestartKeepsTheHit) {
  ProgramOptions options;
  options.arch = "sm_80";
  auto first =
      Compile(Program(kernels::kSaxpy, "saxpy.cu"), options, CodeType::kCubin);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(daemon_->Stop(), 0);
  ASSERT_TRUE(daemon_->Start().ok()) << daemon_->Log();
  auto second =
      Compile(Program(kernels::kSaxpy, "saxpy.cu"), options, CodeType::kCubin);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->served, Served::kHit);
  EXPECT_EQ(second->bytes, first->bytes);
}

TEST_F(DaemonTest, NameExpressionIsLoweredOnMissAndOnHit) {
  Program program(kernels::kScaleWithHeader, "scale.cu");
  program.AddHeader("scale.h", "#define SCALE 3");
  ProgramOptions options;
  options.arch = "sm_90";
  options.name_expressions = {"scale<float, 256>"};
  for (Served expected : {Served::kMiss, Served::kHit}) {
    auto code = Compile(program, options, CodeType::kCubin);
    ASSERT_TRUE(code.ok()) << code.status();
    ASSERT_TRUE(code->compiled) << code->log;
    EXPECT_EQ(code->served, expected);
    ASSERT_EQ(code->symbol_mapping.count("scale<float, 256>"), 1u);
    EXPECT_EQ(code->symbol_mapping.at("scale<float, 256>"),
              "_Z5scaleIfLi256EEvPT_");
  }
  // The header's content is part of the key.
  Program changed(kernels::kScaleWithHeader, "scale.cu");
  changed.AddHeader("scale.h", "#define SCALE 4");
  auto other = Compile(changed, options, CodeType::kCubin);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->served, Served::kMiss);
}

TEST_F(DaemonTest, SyntaxErrorIsACompileErrorServedFromTheStoreTheSecondTime) {
  ProgramOptions options;
  const Program broken("__global__ void broken( { }", "broken.cu");
  auto first = Compile(broken, options, CodeType::kPtx);
  auto second = Compile(broken, options, CodeType::kPtx);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(first->compiled);
  EXPECT_FALSE(second->compiled);
  EXPECT_THAT(first->log, HasSubstr("broken.cu"));
  EXPECT_THAT(first->log, HasSubstr("error"));
  EXPECT_EQ(second->log, first->log);
  EXPECT_EQ(first->served, Served::kMiss);
  EXPECT_EQ(second->served, Served::kHit);
  EXPECT_TRUE(second->bytes.empty());
}

TEST_F(DaemonTest, ToolkitHeadersIncludingCubNeedNoFlags) {
  ProgramOptions options;
  options.arch = "sm_90";
  options.name_expressions = {"block_sort<128, 4>"};
  auto code = Compile(Program(kernels::kBlockSort, "sort.cu"), options,
                      CodeType::kCubin);
  ASSERT_TRUE(code.ok()) << code.status();
  ASSERT_TRUE(code->compiled) << code->log;
  EXPECT_EQ(code->symbol_mapping.at("block_sort<128, 4>"),
            "_Z10block_sortILi128ELi4EEvPi");
}

TEST_F(DaemonTest, BadInputsAreClearErrorsAndTheDaemonKeepsServing) {
  struct Case {
    std::string what;
    Program program;
    ProgramOptions options;
    CodeType target = CodeType::kPtx;
    std::string needle;
  };
  ProgramOptions unknown;
  unknown.extra_options = {"--no-such-option"};
  ProgramOptions malformed;
  malformed.extra_options = {"-ftz=perhaps"};
  ProgramOptions bad_arch;
  bad_arch.arch = "sm_42";
  ProgramOptions missing_name;
  missing_name.name_expressions = {"no_such_kernel<int>"};
  Program templated(kernels::kScaleWithHeader);
  templated.AddHeader("scale.h", "#define SCALE 2");
  Program big_header(kernels::kSaxpy);
  big_header.AddHeader("big.h", std::string((16 << 20) + 1, ' '));
  std::vector<Case> cases;
  cases.push_back({"NUL in the source",
                   Program(std::string("a\0b", 3)),
                   {},
                   CodeType::kPtx,
                   "source contains a NUL byte"});
  cases.push_back({"source over 16 MiB",
                   Program(std::string((16 << 20) + 1, ' ')),
                   {},
                   CodeType::kPtx,
                   "over the limit of 16777216 bytes"});
  cases.push_back({"header over 16 MiB",
                   big_header,
                   {},
                   CodeType::kPtx,
                   "header 'big.h' is 16777217 bytes"});
  cases.push_back({"unknown option", Program(kernels::kSaxpy), unknown,
                   CodeType::kPtx, "'--no-such-option': unknown NVRTC option"});
  cases.push_back({"malformed option", Program(kernels::kSaxpy), malformed,
                   CodeType::kPtx, "takes one of: true, false"});
  cases.push_back({"unsupported arch", Program(kernels::kSaxpy), bad_arch,
                   CodeType::kPtx, "sm_42 is not supported"});
  cases.push_back({"cubin without arch",
                   Program(kernels::kSaxpy),
                   {},
                   CodeType::kCubin,
                   "sm_XX"});
  cases.push_back({"missing name expression", templated, missing_name,
                   CodeType::kPtx, "no_such_kernel"});
  for (int round = 0; round < 2; ++round) {  // the second time is no hit either
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      auto code = Compile(c.program, c.options, c.target);
      ASSERT_FALSE(code.ok());
      EXPECT_EQ(code.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(code.status().message()), HasSubstr(c.needle));
    }
  }
  ExpectServing();
}

TEST_F(DaemonTest, SecondDaemonOnALockedStoreExitsNamingThePath) {
  auto result = testing::RunProcess({testing::DaemonBinary(),
                                     "--socket=" + dir_.Sub("other.sock"),
                                     "--store=" + dir_.Sub("store")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output,
              HasSubstr("store " + dir_.Sub("store") + " is locked"));
  ExpectServing();
}

TEST_F(DaemonTest, SecondDaemonOnALiveSocketIsRefused) {
  auto result = testing::RunProcess({testing::DaemonBinary(),
                                     "--socket=" + dir_.Sub("s.sock"),
                                     "--store=" + dir_.Sub("store2")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output,
              HasSubstr("socket " + dir_.Sub("s.sock") + " is in use"));
  ExpectServing();
}

TEST_F(DaemonTest, SocketOfADeadDaemonIsReclaimed) {
  ProgramOptions options;
  auto first =
      Compile(Program(kernels::kSaxpy, "saxpy.cu"), options, CodeType::kPtx);
  ASSERT_TRUE(first.ok());
  daemon_->Kill();
  struct stat st {};
  ASSERT_EQ(stat(dir_.Sub("s.sock").c_str(), &st), 0)
      << "socket file should be left";
  ASSERT_TRUE(daemon_->Start().ok()) << daemon_->Log();
  auto second =
      Compile(Program(kernels::kSaxpy, "saxpy.cu"), options, CodeType::kPtx);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->served, Served::kHit);
  EXPECT_EQ(second->bytes, first->bytes);
}

TEST_F(DaemonTest, StorePathThatCannotBeCreatedIsAClearError) {
  std::ofstream(dir_.Sub("plain-file")) << "x";
  const std::string store = dir_.Sub("plain-file/store");
  auto result = testing::RunProcess({testing::DaemonBinary(),
                                     "--socket=" + dir_.Sub("x.sock"),
                                     "--store=" + store});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr(store));
}

TEST_F(DaemonTest, CliCompilesTwiceMissThenHit) {
  const std::string source = dir_.Sub("k.cu");
  std::ofstream(source) << kernels::kScaleWithHeader;
  std::ofstream(dir_.Sub("scale.h")) << "#define SCALE 2";
  const std::vector<std::string> argv = {testing::CliBinary(),
                                         "--socket",
                                         dir_.Sub("s.sock"),
                                         "compile",
                                         source,
                                         "--arch",
                                         "sm_90",
                                         "--target",
                                         "cubin",
                                         "--header",
                                         "scale.h=" + dir_.Sub("scale.h"),
                                         "--name-expression",
                                         "scale<int, 8>",
                                         "-DUNUSED=1",
                                         "-o",
                                         dir_.Sub("k.cubin")};
  auto miss = testing::RunProcess(argv);
  auto hit = testing::RunProcess(argv);
  EXPECT_EQ(miss.exit_code, 0) << miss.output;
  EXPECT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_THAT(miss.output, StartsWith("MISS key "));
  EXPECT_THAT(hit.output, StartsWith("HIT key "));
  EXPECT_THAT(hit.output, HasSubstr("scale<int, 8> -> _Z5scaleIiLi8EEvPT_"));
  std::ifstream in(dir_.Sub("k.cubin"), std::ios::binary);
  const std::string cubin(std::istreambuf_iterator<char>(in), {});
  EXPECT_THAT(cubin, StartsWith("\x7f"
                                "ELF"));

  auto bad =
      testing::RunProcess({testing::CliBinary(), "--socket", dir_.Sub("s.sock"),
                           "compile", source, "--target", "cubin"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_THAT(bad.output, HasSubstr("sm_XX"));
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

// `-o` writes through what is there, as compilers do: a device stays a
// device (root's `-o /dev/null` once replaced the node with a file), a
// symbolic link's target gets the bytes, and every link of a file of
// several sees them; a lone regular file is replaced. Both front ends.
class OutputPathTest : public testing::DaemonFixture {};

TEST_F(OutputPathTest, TheOutputIsWrittenThroughWhatIsThere) {
  const std::string source = dir_.Sub("k.cu");
  testing::WriteFile(source, kernels::kSaxpy);
  auto compile = [&](const std::string& cli, const std::string& out) {
    return testing::RunProcess({cli, "--socket", dir_.Sub("s.sock"), "compile",
                                source, "--arch", "sm_90", "--target", "cubin",
                                "-o", out});
  };
  const std::string full = testing::CliBinary() + "-full";
  for (const std::string& cli : {full, testing::CliBinary()}) {
    SCOPED_TRACE(cli);
    const std::string target = dir_.Sub("target.cubin");
    const std::string link = dir_.Sub("link.cubin");
    const std::string second = dir_.Sub("second-name.cubin");
    std::filesystem::remove(target);
    std::filesystem::remove(link);
    std::filesystem::remove(second);
    testing::WriteFile(target, "old");
    std::filesystem::create_symlink(target, link);
    testing::ProcessResult through_link = compile(cli, link);
    ASSERT_EQ(through_link.exit_code, 0) << through_link.output;
    EXPECT_TRUE(std::filesystem::is_symlink(link));
    const std::string object = testing::ReadFile(target);
    EXPECT_EQ(object.substr(0, 4),
              "\x7f"
              "ELF");

    testing::WriteFile(target, "old");
    std::filesystem::create_hard_link(target, second);
    ASSERT_EQ(compile(cli, target).exit_code, 0);
    EXPECT_EQ(testing::ReadFile(second), object) << "the other link";

    if (geteuid() == 0) {
      const std::string device = dir_.Sub("null");
      std::filesystem::remove(device);
      ASSERT_EQ(mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
      testing::ProcessResult to_device = compile(cli, device);
      EXPECT_EQ(to_device.exit_code, 0) << to_device.output;
      struct stat st;
      ASSERT_EQ(stat(device.c_str(), &st), 0);
      EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device became a file";
    }
  }
}

}  // namespace
}  // namespace jitcache
