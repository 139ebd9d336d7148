#include "server/engine/place_proof.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/compile_place.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

// As two processes of the real NVRTC name one internal symbol of a CUB
// kernel (seen from NVRTC 13.0).
constexpr char kOne[] =
    ".global .b8 _ZN42_INTERNAL_00000000_7_kern_cu_fdc67bc7_53524cuda3std"
    "3__45__cpo5beginE[1];";
constexpr char kTwo[] =
    ".global .b8 _ZN42_INTERNAL_00000000_7_kern_cu_ce41c54c_54844cuda3std"
    "3__45__cpo5beginE[1];";

TEST(PlaceProof, WhatNvrtcVariesPerProcessIsMaskedInPlace) {
  EXPECT_EQ(WithoutProcessNoise(kOne), WithoutProcessNoise(kTwo));
  EXPECT_EQ(WithoutProcessNoise(kOne).size(), std::string(kOne).size());
  EXPECT_EQ(WithoutProcessNoise("_GLOBAL__N__00000000_7_kern_cu_fdc67bc7_5"),
            WithoutProcessNoise("_GLOBAL__N__12345678_7_kern_cu_00aa00aa_6"));
  // Another file name, or anything else, stays.
  EXPECT_NE(WithoutProcessNoise(kOne),
            WithoutProcessNoise(
                ".global .b8 _ZN42_INTERNAL_00000000_7_kern_cx_fdc67bc7_53524"
                "cuda3std3__45__cpo5beginE[1];"));
  EXPECT_EQ(WithoutProcessNoise("_INTERNAL_"), "_INTERNAL_");
  EXPECT_EQ(WithoutProcessNoise("_INTERNAL_1234"), "_INTERNAL_1234");
  EXPECT_EQ(WithoutProcessNoise("a_INTERNAL_0123abcdz"),
            "a_INTERNAL_xxxxxxxxz");
  EXPECT_EQ(LogWithoutRunNoise("Compile time = 12.5 ms"),
            LogWithoutRunNoise("Compile time = 9.25 ms"));
  EXPECT_NE(LogWithoutRunNoise("error in a.cu, line 3"),
            LogWithoutRunNoise("error in a.cu, line 4"));
}

TEST(PlaceProof, SameAnswerComparesEverythingButTheNoise) {
  ActionResult a;
  a.ok = true;
  a.object = kOne;
  a.log = "warning, Compile time = 1.5 ms";
  a.lowered_names = {{"k<int>", "_Z1kIiEvv"}};
  ActionResult b = a;
  b.object = kTwo;
  b.log = "warning, Compile time = 7.5 ms";
  EXPECT_TRUE(SameAnswer(a, b));
  ActionResult c = a;
  c.object += " ";
  EXPECT_FALSE(SameAnswer(a, c));
  c = a;
  c.log = "another warning";
  EXPECT_FALSE(SameAnswer(a, c));
  c = a;
  c.ok = false;
  EXPECT_FALSE(SameAnswer(a, c));
  c = a;
  c.lowered_names[0].second = "_Z1kIfEvv";
  EXPECT_FALSE(SameAnswer(a, c));
}

// A log that names the program (CuPy's temporary file in a warning) is the
// same answer under another name when nothing else differs.
TEST(PlaceProof, ALogThatDiffersByTheProgramsNameAloneIsOneAnswer) {
  ActionResult a;
  a.ok = true;
  a.object = "ptx";
  a.log =
      "/tmp/tmpab/k.cu(3): warning #177-D: variable \"x\" was declared"
      " but never referenced\n\nRemark: /tmp/tmpab/k.cu\n";
  ActionResult b = a;
  b.log =
      "/e/pr0g/r3n4m3d_k_x9.cu(3): warning #177-D: variable \"x\" was "
      "declared but never referenced\n\nRemark: /e/pr0g/r3n4m3d_k_x9.cu\n";
  EXPECT_FALSE(SameAnswer(a, b));
  EXPECT_TRUE(
      SameAnswerButTheName(a, "/tmp/tmpab/k.cu", b, "/e/pr0g/r3n4m3d_k_x9.cu"));
  const std::optional<std::string> t = LogTemplate(a.log, "/tmp/tmpab/k.cu");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(LogFor(*t, "/tmp/tmpab/k.cu"), a.log);
  EXPECT_EQ(LogFor(*t, "/e/pr0g/r3n4m3d_k_x9.cu"), b.log);
  // Anything else that differs, or a name the log does not hold: no.
  ActionResult c = b;
  c.object = "other ptx";
  EXPECT_FALSE(
      SameAnswerButTheName(a, "/tmp/tmpab/k.cu", c, "/e/pr0g/r3n4m3d_k_x9.cu"));
  c = b;
  c.log += "one more line\n";
  EXPECT_FALSE(
      SameAnswerButTheName(a, "/tmp/tmpab/k.cu", c, "/e/pr0g/r3n4m3d_k_x9.cu"));
  EXPECT_FALSE(SameAnswerButTheName(a, "/tmp/tmpab/k.cu", b, "/e/other.cu"));
  EXPECT_EQ(LogTemplate("no name here", "k.cu"), std::nullopt);
  EXPECT_EQ(LogTemplate("k.cu", ""), std::nullopt);
  EXPECT_EQ(LogTemplate(std::string("k.cu ") + std::string(kProgramNameInLog),
                        "k.cu"),
            std::nullopt)
      << "a log that holds the placeholder itself is never a template";
}

TEST(PlaceProof, TheJobElsewhereMovesThePlaceAndTheTimesOnly) {
  CompileJob job;
  job.program_name = "/tmp/tmpab12/kern.cu";
  job.working_directory = "/home/ada/proj";
  job.source = "#include \"k.h\"\n";
  job.options = {"-arch=sm_90", "-lineinfo"};
  job.files =
      std::make_shared<const std::vector<std::pair<std::string, std::string>>>(
          std::vector<std::pair<std::string, std::string>>{
              {"P:k.h", "int k;"}, {"C:inc/i.h", "int i;"}});
  job.file_mtimes_ns = {1'000, 2'000};
  std::optional<CompileJob> there = ElsewhereJob(job);
  ASSERT_TRUE(there.has_value());
  EXPECT_EQ(there->source, job.source);
  EXPECT_EQ(there->options, job.options);
  EXPECT_EQ(there->files, job.files) << "the same files, anchored";
  EXPECT_NE(there->working_directory, job.working_directory);
  EXPECT_NE(there->program_name, job.program_name);
  EXPECT_EQ(
      CompilePlace(there->working_directory, there->program_name)
          .ProgramForKey(),
      CompilePlace(job.working_directory, job.program_name).ProgramForKey());
  EXPECT_EQ(there->file_mtimes_ns,
            (std::vector<int64_t>{1'000 + kElsewhereTimeShiftNs,
                                  2'000 + kElsewhereTimeShiftNs}));
}

}  // namespace
}  // namespace jitcache
