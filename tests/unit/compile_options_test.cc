#include "common/compile_options.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const OptionPolicy kPolicy{{75, 80, 90, 100}, {"/opt/cuda/include"}};

absl::StatusOr<CanonicalOptions> Canon(std::vector<std::string> raw,
                                       ObjectKind target = ObjectKind::kPtx) {
  return CanonicalizeCompileOptions(raw, target, kPolicy);
}

std::vector<std::string> Options(std::vector<std::string> raw,
                                 ObjectKind target = ObjectKind::kPtx) {
  absl::StatusOr<CanonicalOptions> c = Canon(std::move(raw), target);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? c->options : std::vector<std::string>{"<error>"};
}

TEST(CompileOptions, ArchSpellingsAreOneOption) {
  const auto expected = Options({"-arch=sm_90"});
  EXPECT_THAT(expected, ElementsAre("--gpu-architecture=sm_90"));
  EXPECT_EQ(Options({"--gpu-architecture=sm_90"}), expected);
  EXPECT_EQ(Options({"-arch", "sm_90"}), expected);
  EXPECT_EQ(Options({"--gpu-architecture", "sm_90"}), expected);
  EXPECT_EQ(Canon({"-arch=sm_90a"})->arch, "sm_90a");
  EXPECT_EQ(Canon({"-arch=compute_80"})->arch, "compute_80");
}

TEST(CompileOptions, PositionFreeOptionsAreSortedAndLastWins) {
  EXPECT_EQ(Options({"-ftz=true", "-lineinfo", "-arch=sm_80"}),
            Options({"-lineinfo", "--gpu-architecture=sm_80", "--ftz=true"}));
  EXPECT_EQ(Options({"-ftz=false", "-ftz=true"}), Options({"--ftz=true"}));
  EXPECT_EQ(Options({"-lineinfo", "-lineinfo"}), Options({"-lineinfo"}));
  EXPECT_EQ(Options({"-ftz=TRUE"}), Options({"-ftz=true"}));
  EXPECT_EQ(Options({"-std=c++17"}), Options({"--std", "c++17"}));
}

TEST(CompileOptions, MacroAndIncludeOrderIsKept) {
  EXPECT_THAT(Options({"-DA=1", "-U", "A", "--define-macro=B"}),
              ElementsAre("--define-macro=A=1", "--undefine-macro=A",
                          "--define-macro=B"));
  EXPECT_NE(Options({"-DA", "-UA"}), Options({"-UA", "-DA"}));
  EXPECT_NE(Options({"-I/opt/cuda/include/a", "-I/opt/cuda/include/b"}),
            Options({"-I/opt/cuda/include/b", "-I/opt/cuda/include/a"}));
  EXPECT_EQ(Options({"-D", "X"}), Options({"-DX"}));
}

TEST(CompileOptions, TargetImpliesItsOptions) {
  EXPECT_THAT(Options({"-arch=sm_90"}, ObjectKind::kLtoir),
              ElementsAre("--gpu-architecture=sm_90", "--dlink-time-opt"));
  EXPECT_EQ(Options({"-arch=sm_90", "-dlto"}, ObjectKind::kLtoir),
            Options({"-arch=sm_90"}, ObjectKind::kLtoir));
  EXPECT_THAT(Canon({"-dlto"}, ObjectKind::kPtx).status().message(),
              HasSubstr("ltoir"));
  EXPECT_THAT(Canon({}, ObjectKind::kCubin).status().message(),
              HasSubstr("sm_XX"));
  EXPECT_THAT(
      Canon({"-arch=compute_90"}, ObjectKind::kCubin).status().message(),
      HasSubstr("sm_XX"));
}

TEST(CompileOptions, BadOptionsAreNamed) {
  struct Case {
    std::vector<std::string> raw;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{"--frobnicate"}, "'--frobnicate': unknown NVRTC option"},
      {{"notanoption"}, "'notanoption': is not an option"},
      {{"-arch"}, "'-arch': needs a value"},
      {{"-arch="}, "'-arch=': needs a value"},
      {{"-arch=sm_42"}, "sm_42 is not supported"},
      {{"-arch=banana"}, "not an architecture"},
      {{"-ftz=maybe"}, "takes one of: true, false;"},
      {{"-lineinfo=1"}, "takes no value"},
      {{"-std=c++99"}, "takes one of: c++03, c++11"},
      {{"-maxrregcount=lots"}, "whole number"},
      {{"--pch-dir=/tmp/p"}, "refused: precompiled headers"},
      {{"-pch"}, "refused"},
      {{"--create-pch=x.pch"}, "refused"},
      {{"--use-pch=x.pch"}, "refused"},
      {{"-time=t.csv"}, "refused: it writes a timing file"},
      {{"--fdevice-time-trace=t.json"}, "refused"},
      {{"-MF", "d.d"}, "refused: it writes a dependency file"},
      {{"-I/home/me/include"}, "'/home/me/include' is refused"},
      {{"-Irelative"}, "is refused"},
      {{"-I/opt/cuda/include/../../etc"}, "is refused"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CanonicalOptions> result = Canon(c.raw);
    ASSERT_FALSE(result.ok()) << c.raw[0];
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(c.needle))
        << c.raw[0];
  }
}

TEST(CompileOptions, ToolkitIncludeDirectoriesAreAllowed) {
  EXPECT_THAT(Options({"-I/opt/cuda/include/cccl/"}),
              ElementsAre("--include-path=/opt/cuda/include/cccl"));
  EXPECT_THAT(Options({"-I", "/opt/cuda/include"}),
              ElementsAre("--include-path=/opt/cuda/include"));
}

}  // namespace
}  // namespace jitcache
