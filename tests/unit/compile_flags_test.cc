#include "client/cli/compile_flags.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace jitcache::cli {
namespace {

TEST(CompileFlags, EveryFlagInBothSpellings) {
  CompileFlags f;
  std::string error;
  ASSERT_TRUE(ParseCompileFlags(
      {"k.cu", "--arch=sm_80,sm_90", "--target", "cubin", "--name-expression",
       "f<int>", "--header=a.h=inc/a.h", "--program-name", "p.cu", "-o",
       "out.cubin", "-DX=1", "--wait-for-proof", "-lineinfo"},
      &f, &error))
      << error;
  EXPECT_TRUE(f.wait_for_proof);
  EXPECT_EQ(f.file, "k.cu");
  EXPECT_EQ(f.archs, (std::vector<std::string>{"sm_80", "sm_90"}));
  EXPECT_EQ(f.target, "cubin");
  EXPECT_EQ(f.name_expressions, std::vector<std::string>{"f<int>"});
  ASSERT_EQ(f.headers.size(), 1u);
  EXPECT_EQ(f.headers[0].first, "a.h");
  EXPECT_EQ(f.headers[0].second, "inc/a.h");
  EXPECT_EQ(f.program_name, "p.cu");
  EXPECT_EQ(f.output, "out.cubin");
  EXPECT_EQ(f.nvrtc_options, (std::vector<std::string>{"-DX=1", "-lineinfo"}));
}

TEST(CompileFlags, UsageErrorsSayWhat) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"k.cu", "--arch"}, "--arch needs a value"},
      {{"k.cu", "--target", "sass"}, "unknown target 'sass'"},
      {{"k.cu", "--header", "a.h"}, "--header takes NAME=FILE"},
      {{"-DX=1"}, "no FILE.cu given"},
  };
  for (const auto& [args, message] : cases) {
    CompileFlags f;
    std::string error;
    EXPECT_FALSE(ParseCompileFlags(args, &f, &error)) << message;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

TEST(CompileFlags, DefaultOutputReplacesTheFilesExtensionOnly) {
  EXPECT_EQ(DefaultOutput("k.cu", "ptx"), "k.ptx");
  EXPECT_EQ(DefaultOutput("dir.v1/k.cu", "cubin"), "dir.v1/k.cubin");
  EXPECT_EQ(DefaultOutput("dir.v1/kernel", "ltoir"), "dir.v1/kernel.ltoir");
}

TEST(CompileFlags, ResultLines) {
  EXPECT_EQ(ResultLines("HIT", true, "COMPILE_ERROR", "ab", 12.34, 0.5, "k.ptx",
                        99, {{"f<int>", "_Z1fIiEvv"}}),
            "HIT key ab compile 12.3 ms total 0.5 ms -> k.ptx (99 bytes)\n"
            "  f<int> -> _Z1fIiEvv\n");
  EXPECT_EQ(
      ResultLines("MISS", false, "COMPILE_ERROR", "ab", 1, 2, "k.ptx", 0, {}),
      "MISS COMPILE_ERROR key ab compile 1.0 ms total 2.0 ms\n");
}

}  // namespace
}  // namespace jitcache::cli
