#include "common/ptxas_command.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

TEST(PtxasCommand, FindsTheInputAndTheOutputInEverySpelling) {
  struct Spelling {
    std::vector<std::string> args;
    std::string input, output;
  };
  const std::vector<Spelling> spellings = {
      {{"-arch=sm_90", "a.ptx", "-o", "a.o"}, "a.ptx", "a.o"},
      {{"--gpu-name", "sm_90a", "-v", "/t/x.ptx", "--output-file", "/t/x.o"},
       "/t/x.ptx",
       "/t/x.o"},
      {{"-lineinfo", "-O3", "k.ptx", "--output-file=k.cubin"},
       "k.ptx",
       "k.cubin"},
      {{"-o=out.o", "-dlcm", "cg", "in.ptx"}, "in.ptx", "out.o"},
      {{"-c", "in.ptx"}, "in.ptx", "elf.o"},
  };
  for (const Spelling& s : spellings) {
    absl::StatusOr<PtxasCommand> command = ParsePtxasCommand(s.args);
    ASSERT_TRUE(command.ok()) << command.status();
    EXPECT_EQ(command->input_path(), s.input);
    EXPECT_EQ(command->output_path(), s.output);
    EXPECT_EQ(command->arguments, s.args);
  }
}

TEST(PtxasCommand, TheKeyedFormHoldsNoName) {
  absl::StatusOr<PtxasCommand> a = ParsePtxasCommand(
      {"-v", "--gpu-name=sm_90a", "/tmp/tmpabc.ptx", "-o", "/tmp/tmpabc.o"});
  absl::StatusOr<PtxasCommand> b = ParsePtxasCommand(
      {"-v", "--gpu-name=sm_90a", "/tmp/tmpxyz.ptx", "-o", "/tmp/tmpxyz.o"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->WithoutNames(), b->WithoutNames());
  absl::StatusOr<PtxasCommand> attached =
      ParsePtxasCommand({"x.ptx", "--output-file=x.o"});
  ASSERT_TRUE(attached.ok());
  EXPECT_EQ(attached->WithoutNames()[1].substr(0, 14), "--output-file=");
  EXPECT_NE(attached->WithoutNames()[1], "--output-file=x.o");
  // Options are keyed as spelled: another option is another key.
  absl::StatusOr<PtxasCommand> other = ParsePtxasCommand(
      {"-v", "--gpu-name=sm_90", "/tmp/tmpabc.ptx", "-o", "/tmp/tmpabc.o"});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(a->WithoutNames(), other->WithoutNames());
}

TEST(PtxasCommand, WhatReadsOrWritesOtherFilesIsForTheRealPtxas) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"--version"},
           {"-arch=sm_90"},
           {"-optf", "opts", "a.ptx"},
           {"--options-file=opts", "a.ptx"},
           {"-ias", ".version 8.0", "-o", "a.o"},
           {"a.ptx", "b.ptx", "-o", "a.o"},
           {"a.ptx,b.ptx"},
           {"a.ptx", "-o", "x.o", "-o", "y.o"},
           {"a.ptx", "-o"},
           {"a.ptx", "-o="},
           {"a.ptx", "--bogus"},
           {"a.ptx", "-v=true"},
           {"a.ptx", "--split-compile", "4"},
           {"a.ptx", "--lineinfo"},  // ptxas knows only -lineinfo
       }) {
    absl::StatusOr<PtxasCommand> command = ParsePtxasCommand(args);
    EXPECT_TRUE(absl::IsFailedPrecondition(command.status()))
        << args.front() << " " << args.back() << ": " << command.status();
  }
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParsePtxasCommand({std::string("a\0b.ptx", 7)}).status()));
}

}  // namespace
}  // namespace jitcache
