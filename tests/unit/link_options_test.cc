#include "common/link_options.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const OptionPolicy kPolicy{{75, 80, 90}};

std::vector<std::string> Options(std::vector<std::string> raw,
                                 ObjectKind target = ObjectKind::kCubin,
                                 bool ltoir = false) {
  auto c = CanonicalizeLinkOptions(raw, target, ltoir, kPolicy);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? c->options : std::vector<std::string>{"<error>"};
}

TEST(LinkOptions, CanonicalSpellingAndOrder) {
  EXPECT_THAT(Options({"-O3", "-arch=sm_90", "-ftz=TRUE", "-lto"}),
              ElementsAre("-arch=sm_90", "-O3", "-ftz=true", "-lto"));
  EXPECT_EQ(Options({"-arch", "sm_90", "-O=3"}),
            Options({"-O3", "-arch=sm_90"}));
  EXPECT_EQ(Options({"-arch=sm_90", "-kernels-used=b", "-kernels-used=a",
                     "-kernels-used=a"}),
            Options({"-kernels-used=a", "-arch=sm_90", "-kernels-used=b"}));
  EXPECT_NE(Options({"-arch=sm_90", "-Xptxas=-v", "-Xptxas=-O1"}),
            Options({"-arch=sm_90", "-Xptxas=-O1", "-Xptxas=-v"}));
}

TEST(LinkOptions, TargetAndInputsImplyTheirOptions) {
  EXPECT_THAT(Options({"-arch=sm_90"}, ObjectKind::kPtx),
              ElementsAre("-arch=sm_90", "-ptx"));
  EXPECT_EQ(Options({"-arch=sm_90"}, ObjectKind::kCubin, /*ltoir=*/true),
            Options({"-arch=sm_90", "-lto"}, ObjectKind::kCubin, true));
}

TEST(LinkOptions, BadOptionsAreNamed) {
  struct Case {
    std::vector<std::string> raw;
    ObjectKind target;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{}, ObjectKind::kCubin, "add -arch=sm_XX"},
      {{"-arch=compute_90"}, ObjectKind::kCubin, "add -arch=sm_XX"},
      {{"-arch=sm_42"}, ObjectKind::kCubin, "not supported by this nvJitLink"},
      {{"-arch=sm_90", "-O7"}, ObjectKind::kCubin, "takes one of: 0, 1, 2, 3"},
      {{"-arch=sm_90", "-frobnicate"},
       ObjectKind::kCubin,
       "unknown nvJitLink option"},
      {{"-arch=sm_90", "-time"}, ObjectKind::kCubin, "refused"},
      {{"-arch=sm_90", "-ptx"}, ObjectKind::kCubin, "ask for target ptx"},
      {{"-arch=sm_90"}, ObjectKind::kLtoir, "cubin or ptx only"},
  };
  for (const Case& c : cases) {
    auto result = CanonicalizeLinkOptions(c.raw, c.target, false, kPolicy);
    ASSERT_FALSE(result.ok()) << c.needle;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(c.needle));
  }
}

TEST(LinkOptions, OptionsThatReadTheCallersFilesAreTold) {
  for (const std::vector<std::string>& options :
       std::vector<std::vector<std::string>>{
           {"-arch=sm_90", "-Xptxas=--options-file=/home/u/opts"},
           {"-arch=sm_90", "-Xptxas=-optf=opts"},
           {"-Xptxas=-O3,--options-file=opts"}}) {
    EXPECT_TRUE(LinkOptionsReadFiles(options)) << options.back();
  }
  for (const std::vector<std::string>& options :
       std::vector<std::vector<std::string>>{
           {"-arch=sm_90", "-lto"}, {"-arch=sm_90", "-Xptxas=-O3"}, {}}) {
    EXPECT_FALSE(LinkOptionsReadFiles(options));
  }
}

}  // namespace
}  // namespace jitcache
