#include "common/ptxas_command.h"

#include "common/ptx_sources.h"
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
    std::string why;
    std::optional<PtxasCommand> command = ParsePtxasCommand(s.args, &why);
    ASSERT_TRUE(command.has_value()) << why;
    EXPECT_EQ(command->input_path(), s.input);
    EXPECT_EQ(command->output_path(), s.output);
    EXPECT_EQ(command->arguments, s.args);
  }
}

TEST(PtxasCommand, TheKeyedFormHoldsNoName) {
  std::string why;
  std::optional<PtxasCommand> a = ParsePtxasCommand(
      {"-v", "--gpu-name=sm_90a", "/tmp/tmpabc.ptx", "-o", "/tmp/tmpabc.o"},
      &why);
  std::optional<PtxasCommand> b = ParsePtxasCommand(
      {"-v", "--gpu-name=sm_90a", "/tmp/tmpxyz.ptx", "-o", "/tmp/tmpxyz.o"},
      &why);
  ASSERT_TRUE(a.has_value() && b.has_value()) << why;
  EXPECT_EQ(a->WithoutNames(), b->WithoutNames());
  std::optional<PtxasCommand> attached =
      ParsePtxasCommand({"x.ptx", "--output-file=x.o"}, &why);
  ASSERT_TRUE(attached.has_value()) << why;
  EXPECT_EQ(attached->WithoutNames()[1].substr(0, 14), "--output-file=");
  EXPECT_NE(attached->WithoutNames()[1], "--output-file=x.o");
  // Options are keyed as spelled: another option is another key.
  std::optional<PtxasCommand> other = ParsePtxasCommand(
      {"-v", "--gpu-name=sm_90", "/tmp/tmpabc.ptx", "-o", "/tmp/tmpabc.o"},
      &why);
  ASSERT_TRUE(other.has_value()) << why;
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
           {"a.ptx", "--lineinfo"},            // ptxas knows only -lineinfo
           {"-O", "2", "a.ptx", "-o", "a.o"},  // ptxas reads 2 as a file
       }) {
    std::string why;
    EXPECT_FALSE(ParsePtxasCommand(args, &why).has_value())
        << args.front() << " " << args.back();
    EXPECT_FALSE(why.empty()) << args.front() << " " << args.back();
  }
  std::string why;
  EXPECT_FALSE(
      ParsePtxasCommand({std::string("a\0b.ptx", 7)}, &why).has_value());
  EXPECT_NE(why.find("NUL"), std::string::npos) << why;
}

TEST(PtxSourceFiles, ReadsEveryFileDirectiveInOrder) {
  std::string why;
  const std::optional<std::vector<std::string>> files = PtxSourceFiles(
      ".version 8.7\n"
      "\t.file\t1 \"/home/u/k.py\"\n"
      "  .file 2 \"/usr/include/x.h\", 1700000000, 512\n"
      ".filex 3 \"not.a.directive\"\n"
      "// .file 4 \"a comment\"\n"
      "\t.file\t5 \"last.cu\"",  // no newline at the end
      &why);
  ASSERT_TRUE(files.has_value()) << why;
  EXPECT_EQ(*files, (std::vector<std::string>{"/home/u/k.py",
                                              "/usr/include/x.h", "last.cu"}));
  ASSERT_TRUE(PtxSourceFiles("", &why).has_value());
  EXPECT_TRUE(PtxSourceFiles("", &why)->empty());
}

TEST(PtxSourceFiles, DirectivesThatDoNotStartALineCountToo) {
  std::string why;
  const std::optional<std::vector<std::string>> files = PtxSourceFiles(
      ".version 8.7 .file 1 \"after-a-directive.cu\"\n"
      "/* a comment */.file 2 \"after-a-comment.cu\"\n"
      "}\t.file 3 \"after-a-brace.cu\"\n"
      "ret; .file 4 \"after-a-statement.cu\"\n"
      "/* .file 5 \"in-a-comment.cu\" */\n"
      "x.file 6 \"not-a-directive.cu\"\n"
      ".pragma \".file 7 in-a-string\";\n",
      &why);
  ASSERT_TRUE(files.has_value()) << why;
  EXPECT_EQ(*files, (std::vector<std::string>{
                        "after-a-directive.cu", "after-a-comment.cu",
                        "after-a-brace.cu", "after-a-statement.cu"}));
}

TEST(PtxSourceFiles, NamesItCannotReadExactlyAreForTheRealPtxas) {
  for (const char* ptx :
       {".file 1 \"a\\\"b.cu\"\n", ".file 1 k.cu\n", ".file 1 \"unterminated\n",
        ".file 1 \"/proc/self/exe\"\n", ".file 1 \"/dev/fd/3\"\n",
        "/* unterminated comment .file 1 \"a.cu\"\n"}) {
    std::string why;
    EXPECT_FALSE(PtxSourceFiles(ptx, &why).has_value()) << ptx;
    EXPECT_FALSE(why.empty()) << ptx;
  }
  std::string many;
  for (int i = 0; i <= 4096; ++i) many += ".file 1 \"f.cu\"\n";
  std::string why;
  EXPECT_FALSE(PtxSourceFiles(many, &why).has_value());
}

}  // namespace
}  // namespace jitcache
