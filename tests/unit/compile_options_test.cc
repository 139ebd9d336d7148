#include "common/compile_options.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const OptionPolicy kPolicy{{75, 80, 90, 100}};

PlainStatusOr<CanonicalOptions> Canon(std::vector<std::string> raw,
                                      ObjectKind target = ObjectKind::kPtx) {
  return CanonicalizeCompileOptions(raw, target, kPolicy);
}

std::vector<std::string> Options(std::vector<std::string> raw,
                                 ObjectKind target = ObjectKind::kPtx) {
  PlainStatusOr<CanonicalOptions> c = Canon(std::move(raw), target);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? c->options : std::vector<std::string>{"<error>"};
}

// NVRTC reads -maxrregcount=032 as octal and refuses -ftz=TRUE: the only
// safe key for an option is its text.
TEST(CompileOptions, OptionsGoToNvrtcAsSpelled) {
  EXPECT_THAT(Options({"-maxrregcount=032", "-ftz=true", "-lineinfo"}),
              ElementsAre("-maxrregcount=032", "-ftz=true", "-lineinfo"));
  EXPECT_NE(Options({"-arch=sm_90"}), Options({"--gpu-architecture=sm_90"}));
  EXPECT_NE(Options({"-DA", "-UA"}), Options({"-UA", "-DA"}));
  EXPECT_THAT(Options({"-arch", "sm_90", "-lineinfo", "-lineinfo"}),
              ElementsAre("-arch", "sm_90", "-lineinfo", "-lineinfo"));
  EXPECT_THAT(Options({"-I", "../inc", "-Irel"}),
              ElementsAre("-I", "../inc", "-Irel"))
      << "include directories too: the compile runs in the caller's "
         "working directory";
  EXPECT_THAT(Options({"-arch=sm_90"}, ObjectKind::kLtoir),
              ElementsAre("-arch=sm_90"))
      << "the target adds nothing: without -dlto NVRTC makes no LTO-IR";
}

// Options NVRTC 13 accepts that went to the caller's own NVRTC uncached
// before issue 36: the daemon takes them now, as spelled (the NVRTC
// differential corpus shows each answer is the real NVRTC's, on a miss, a
// hit and after a restart).
TEST(CompileOptions, NvrtcThirteensFurtherOptionsAreTakenAsSpelled) {
  for (const char* option :
       {"-Ofc=max", "-Ofc=0", "-frandom-seed=5", "--frandom-seed=5",
        "-fassociative-math", "--jump-table-density=50",
        "--modify-stack-limit=false", "-modify-stack-limit=true", "-no-cache",
        "--no-cache", "--no-lineinfo-inlined-at", "-device-float128"}) {
    PlainStatusOr<CanonicalOptions> taken = Canon({"-arch=sm_90", option});
    ASSERT_TRUE(taken.ok()) << option << ": " << taken.status();
    EXPECT_THAT(taken->options, ElementsAre("-arch=sm_90", option));
  }
  // Values NVRTC refuses are refused by name here too.
  EXPECT_FALSE(Canon({"-arch=sm_90", "-Ofc=fastest"}).ok());
  EXPECT_FALSE(Canon({"-arch=sm_90", "--modify-stack-limit=maybe"}).ok());
}

// -optix-ir makes NVRTC write OptiX IR and nothing else: a target of its
// own (number 7 on the wire, in keys and in the store), made by compiles
// only, never a link input.
TEST(CompileOptions, OptixIrIsATargetOfItsOwn) {
  for (const char* option : {"-optix-ir", "--optix-ir"}) {
    PlainStatusOr<CanonicalOptions> taken =
        Canon({"-arch=sm_90", option}, ObjectKind::kOptixIr);
    ASSERT_TRUE(taken.ok()) << option << ": " << taken.status();
    EXPECT_THAT(taken->options, ElementsAre("-arch=sm_90", option));
    EXPECT_TRUE(AsksForOptixIr(taken->options));
  }
  EXPECT_FALSE(AsksForOptixIr(std::vector<std::string>{"-dlto", "-optix"}));
  EXPECT_FALSE(Canon({"-optix-ir=true"}, ObjectKind::kOptixIr).ok())
      << "NVRTC takes no value for it";
  EXPECT_FALSE(Canon({"-arch=sm_90"}, ObjectKind::kFatbin).ok());
  EXPECT_EQ(ObjectKindFromNumber(7), ObjectKind::kOptixIr);
  EXPECT_EQ(ObjectKindFromNumber(8), std::nullopt);
  EXPECT_EQ(ObjectKindName(ObjectKind::kOptixIr), "optixir");
  EXPECT_FALSE(IsLinkInput(ObjectKind::kOptixIr));
  EXPECT_TRUE(IsLinkInput(ObjectKind::kLibrary));
}

TEST(CompileOptions, TheArchitectureIsRead) {
  EXPECT_EQ(Canon({"-arch=sm_90a"})->arch, "sm_90a");
  EXPECT_EQ(Canon({"-arch", "compute_80"})->arch, "compute_80");
  EXPECT_EQ(Canon({"-arch=sm_80", "--gpu-architecture=sm_90"})->arch, "sm_90");
  EXPECT_THAT(Canon({}, ObjectKind::kCubin).status().message(),
              HasSubstr("sm_XX"));
  EXPECT_THAT(
      Canon({"-arch=compute_90"}, ObjectKind::kCubin).status().message(),
      HasSubstr("sm_XX"));
}

TEST(CompileOptions, OrderedOptionsAreReadInOrder) {
  const std::vector<std::string> raw = {"-DA=1", "-arch=sm_90",       "-I",
                                        "inc",   "--pre-include=p.h", "-UA"};
  PlainStatusOr<std::vector<std::string>> ordered = OrderedCompileOptions(raw);
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_THAT(*ordered, ElementsAre("--define-macro=A=1", "--include-path=inc",
                                    "--pre-include=p.h", "--undefine-macro=A"));
}

// Without -pch, -create-pch, -use-pch or -pch-dir, NVRTC makes and uses no
// PCH: the options that only tune one are keyed like any other.
TEST(CompileOptions, PchTuningAloneIsKeyed) {
  for (const std::vector<std::string>& raw :
       std::vector<std::vector<std::string>>{
           {"--pch-verbose=true"},
           {"--pch-messages=false"},
           {"--instantiate-templates-in-pch=true"},
           {"-pch-verbose", "true", "-pch-messages=false"}}) {
    PlainStatusOr<CanonicalOptions> result = Canon(raw);
    ASSERT_TRUE(result.ok()) << raw[0] << ": " << result.status();
    EXPECT_THAT(result->options, ::testing::IsSupersetOf(raw));
  }
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
      {{"--pch-verbose=true", "-pch"}, "refused: precompiled headers"},
      {{"--instantiate-templates-in-pch=true", "--use-pch=x.pch"}, "refused"},
      {{"-time=t.csv"}, "refused: it writes a timing file"},
      {{"--fdevice-time-trace=t.json"}, "refused"},
      {{"-MF", "d.d"}, "refused: it writes a dependency file"},
  };
  for (const Case& c : cases) {
    PlainStatusOr<CanonicalOptions> result = Canon(c.raw);
    ASSERT_FALSE(result.ok()) << c.raw[0];
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(c.needle))
        << c.raw[0];
  }
}

}  // namespace
}  // namespace jitcache
