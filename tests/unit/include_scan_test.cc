// The client's include scan on real directories: what it follows, what it
// sends, when it reuses its last answer, and what it refuses.
#include "client/include_scan/include_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/api/compile_includes.h"
#include "common/cache_key.h"
#include "common/plain_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The files of a scan, checking its set digest on the way.
PlainStatusOr<std::vector<ScannedFile>> Files(IncludeScanner& scanner,
                                              const ScanInput& input) {
  PlainStatusOr<std::shared_ptr<const ScanResult>> result = scanner.Scan(input);
  if (!result.ok()) return result.status();
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (const ScannedFile& f : (*result)->files) {
    pairs.emplace_back(f.path, f.digest.AsBytes());
  }
  EXPECT_EQ((*result)->set, IncludedSetDigest(pairs));
  return (*result)->files;
}

class IncludeScanTest : public ::testing::Test {
 protected:
  void Write(const std::string& relative, const std::string& text) {
    const std::string path = dir_.Sub(relative);
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    testing::WriteFile(path, text);
  }

  std::vector<std::string> Paths(const std::vector<ScannedFile>& files) {
    std::vector<std::string> out;
    for (const ScannedFile& f : files) {
      out.push_back(f.path.substr(dir_.path().size() + 1));
    }
    return out;
  }

  ScanInput Input(const std::string& source,
                  const std::vector<std::string>& user_dirs,
                  const std::string& toolkit_dir = "") {
    source_ = source;
    ScanInput input;
    input.program_name = "prog.cu";
    input.cwd = dir_.path();
    input.source = source_;
    for (const std::string& d : user_dirs) {
      std::filesystem::create_directories(dir_.Sub(d));
      input.dirs.push_back({dir_.Sub(d), false, ""});
    }
    if (!toolkit_dir.empty())
      input.dirs.push_back({dir_.Sub(toolkit_dir), true, ""});
    return input;
  }

  testing::TempDir dir_;
  std::string source_;
};

TEST_F(IncludeScanTest, FollowsEveryKindOfIncludeAndSendsOnlyUserFiles) {
  Write("u/a.h",
        "#include \"sub/b.h\"\n"
        "#if __has_include(<opt.h>)\n#endif\n");
  Write("u/sub/b.h",
        "  #  include \"../c.h\" // relative to b.h\n#include <tk.h>\n");
  Write("u/c.h", "#define HDR <m.h>\n#include HDR\n");
  Write("u/m.h", "int m;\n");
  Write("u/opt.h", "int opt;\n");
  Write("u/n.h", "#include_next <n.h>\n");
  Write("v/n.h", "int n;\n");
  Write("u/d.h", "int d;\n");
  Write("u/fromtoolkit.h", "int t;\n");
  Write("u/unrelated.h", "#include <nowhere.h>\n");
  Write("tk/tk.h", "#include <fromtoolkit.h>\n");
  ScanInput input = Input(
      "#include <a.h>\n#include \"mem.h\"\n#include <n.h>\n", {"u", "v"}, "tk");
  const std::string mem_body = "#include <d.h>\n";
  input.header_names = {"mem.h"};
  input.header_bodies = {mem_body};

  IncludeScanner scanner(0);
  PlainStatusOr<std::vector<ScannedFile>> files = Files(scanner, input);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Paths(*files),
              ElementsAre("u/a.h", "u/c.h", "u/d.h", "u/fromtoolkit.h", "u/m.h",
                          "u/n.h", "u/opt.h", "u/sub/b.h", "v/n.h"));
  EXPECT_EQ((*files)[4].digest, Digest::Of("int m;\n"));
}

// NVRTC compiles an in-memory header's text, but stats the file its name
// names (from the working directory, or the name itself when absolute) and
// writes that file's time and size into line information: the file is part
// of the compile as the caller has it, and where there is none, its absence
// is a dependence (a file made there later changes the answer).
TEST_F(IncludeScanTest, TheFileAnInMemoryHeaderNamesIsPartOfTheCompile) {
  Write("mem.h", "// on disk, never compiled\n");
  Write("abs/other.h", "// on disk too\n");
  const std::string absolute = dir_.Sub("abs/other.h");
  ScanInput input = Input("#include \"mem.h\"\n#include \"" + absolute +
                              "\"\n"
                              "#include \"gone.h\"\n",
                          {});
  input.header_names = {"mem.h", absolute, "gone.h"};
  input.header_bodies = {"int m;\n", "int o;\n", "int g;\n"};
  IncludeScanner scanner(0);
  PlainStatusOr<std::shared_ptr<const ScanResult>> result = scanner.Scan(input);
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<std::string> paths;
  for (const ScannedFile& f : (*result)->files) {
    paths.push_back(f.path.substr(dir_.path().size() + 1));
  }
  EXPECT_THAT(paths, ElementsAre("abs/other.h", "mem.h"));
  // By its bytes on disk, with its time, like any file the compile reads.
  EXPECT_EQ((*result)->files[1].digest,
            Digest::Of("// on disk, never compiled\n"));
  EXPECT_GT((*result)->files[1].mtime_ns, 0);
  const std::vector<std::string>& absent = (*result)->depends_on->absent_files;
  EXPECT_NE(std::find(absent.begin(), absent.end(), dir_.Sub("gone.h")),
            absent.end());
}

TEST_F(IncludeScanTest, ChangedAndShadowingFilesAreSeenUnrelatedOnesAreNot) {
  Write("u/a.h", "#include \"c.h\"\n");
  Write("u/c.h", "#define C 3\n");
  Write("u/unrelated.h", "one\n");
  ScanInput input = Input("#include <a.h>\n", {"s", "u"});
  IncludeScanner scanner(0);
  // Timestamps tick coarsely: let each change land on a later tick.
  auto settle = [] { absl::SleepFor(absl::Milliseconds(30)); };
  settle();

  PlainStatusOr<std::vector<ScannedFile>> first = Files(scanner, input);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(Paths(*first), ElementsAre("u/a.h", "u/c.h"));
  ASSERT_TRUE(Files(scanner, input).ok());
  EXPECT_EQ(scanner.walks(), 1u) << "an unchanged tree is answered by stats";

  Write("u/unrelated.h", "two\n");
  settle();
  PlainStatusOr<std::vector<ScannedFile>> unrelated = Files(scanner, input);
  ASSERT_TRUE(unrelated.ok());
  EXPECT_EQ(scanner.walks(), 1u);
  EXPECT_EQ((*unrelated)[1].digest, (*first)[1].digest);

  Write("u/c.h", "#define C 4\n");  // one byte, same size
  settle();
  PlainStatusOr<std::vector<ScannedFile>> changed = Files(scanner, input);
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(scanner.walks(), 2u);
  EXPECT_EQ((*changed)[1].digest, Digest::Of("#define C 4\n"));

  Write("s/a.h", "int shadow;\n");  // earlier in the search order
  settle();
  PlainStatusOr<std::vector<ScannedFile>> shadowed = Files(scanner, input);
  ASSERT_TRUE(shadowed.ok());
  EXPECT_THAT(Paths(*shadowed), ElementsAre("s/a.h"));
}

// Once a scan's stamps were checked, later scans are answered by the
// kernel's change events alone (no stat per file) until something it
// depends on changes: a file written, a header appearing earlier in the
// search, a directory on the way replaced. Changes elsewhere, even next to
// a directory on the way, keep the answer.
TEST_F(IncludeScanTest, AnUnchangedTreeCostsNoStatsAndEveryChangeIsSeen) {
  Write("p/u/a.h", "#include \"c.h\"\n");
  Write("p/u/c.h", "#define C 3\n");
  ScanInput input = Input("#include <a.h>\n", {"p/s", "p/u"});
  IncludeScanner scanner(0, "", /*watch_after_stats=*/0);
  auto settle = [] { absl::SleepFor(absl::Milliseconds(30)); };
  settle();
  auto scan = [&] {
    PlainStatusOr<std::vector<ScannedFile>> files = Files(scanner, input);
    EXPECT_TRUE(files.ok()) << files.status();
    return files.ok() ? *files : std::vector<ScannedFile>();
  };
  ASSERT_THAT(Paths(scan()), ElementsAre("p/u/a.h", "p/u/c.h"));
  scan();  // the stamps checked once, the directories watched
  const uint64_t checks = scanner.stamp_checks();
  for (int i = 0; i < 20; ++i) scan();
  EXPECT_EQ(scanner.stamp_checks(), checks) << "answered without stats";
  EXPECT_EQ(scanner.walks(), 1u);

  // Next to the directories on the way: not theirs, nothing to check.
  Write("p/unrelated.txt", "x");
  Write("p/other/file.h", "x");
  scan();
  EXPECT_EQ(scanner.stamp_checks(), checks);
  // Beside the program (where its own file would be, which NVRTC stats):
  // checked by a stat of that file, not walked again.
  Write("unrelated.txt", "x");
  scan();
  EXPECT_EQ(scanner.stamp_checks(), checks + 1);
  EXPECT_EQ(scanner.walks(), 1u);
  scan();
  EXPECT_EQ(scanner.stamp_checks(), checks + 1);

  Write("p/u/c.h", "#define C 4\n");  // same size
  settle();
  EXPECT_EQ(scan()[1].digest, Digest::Of("#define C 4\n"));
  EXPECT_EQ(scanner.walks(), 2u);

  scan();
  const uint64_t before_shadow = scanner.stamp_checks();
  Write("p/s/a.h", "int shadow;\n");
  settle();
  EXPECT_THAT(Paths(scan()), ElementsAre("p/s/a.h"));
  EXPECT_GT(scanner.stamp_checks(), before_shadow);

  // The directory above both replaced by another tree.
  std::filesystem::remove(dir_.Sub("p/s/a.h"));
  settle();
  scan();
  scan();
  std::filesystem::rename(dir_.Sub("p"), dir_.Sub("p.old"));
  Write("p/u/a.h", "#include \"c.h\"\n");
  Write("p/u/c.h", "#define C 5\n");
  std::filesystem::create_directories(dir_.Sub("p/s"));
  settle();
  EXPECT_EQ(scan()[1].digest, Digest::Of("#define C 5\n"));
}

// A process that compiles a few times checks stamps; it starts watching
// (whose setting up costs as much as dozens of stats) only once it has
// checked many.
// An include directory is resolved once and then remembered, while
// nothing on the way to it changes: a symbolic link re-pointed out of the
// toolkit, or back, is seen at the next compile.
TEST_F(IncludeScanTest, IncludeDirectoriesAreResolvedOnceUntilALinkMoves) {
  IncludeScanner scanner(0);
  Write("toolkit/include/a.h", "");
  Write("mine/include/a.h", "");
  const std::string toolkit = dir_.Sub("toolkit/include");
  const std::string link = dir_.Sub("cuda");
  std::filesystem::create_directory_symlink(dir_.Sub("toolkit"), link);
  const std::vector<std::string> toolkit_dirs = {toolkit};

  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", toolkit_dirs), toolkit);
  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", toolkit_dirs), toolkit);
  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", toolkit_dirs), toolkit);
  EXPECT_EQ(scanner.dirs_resolved(), 1u) << "remembered after the first";
  EXPECT_EQ(scanner.ToolkitDirOf(dir_.Sub("mine/include"), toolkit_dirs), "");

  // Re-pointed as `ln -sfn` does: a new link renamed over the old one.
  std::filesystem::create_directory_symlink(dir_.Sub("mine"),
                                            dir_.Sub("cuda.new"));
  std::filesystem::rename(dir_.Sub("cuda.new"), link);
  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", toolkit_dirs), "");
  std::filesystem::remove(link);
  std::filesystem::create_directory_symlink(dir_.Sub("toolkit"), link);
  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", toolkit_dirs), toolkit);
  // A spelling with ".." is never remembered: after a link, ".." is not
  // what it reads lexically.
  const uint64_t before = scanner.dirs_resolved();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(scanner.ToolkitDirOf(link + "/include/../include", toolkit_dirs),
              toolkit);
  }
  EXPECT_EQ(scanner.dirs_resolved(), before + 2);

  // A link in the middle of a chain (as update-alternatives keeps them:
  // cuda -> alternatives/cuda -> toolkit), re-pointed.
  std::filesystem::remove(link);
  std::filesystem::create_directories(dir_.Sub("alternatives"));
  std::filesystem::create_directory_symlink(dir_.Sub("toolkit"),
                                            dir_.Sub("alternatives/cuda"));
  std::filesystem::create_directory_symlink(dir_.Sub("alternatives/cuda"),
                                            link);
  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", toolkit_dirs), toolkit);
  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", toolkit_dirs), toolkit);
  std::filesystem::create_directory_symlink(dir_.Sub("mine"),
                                            dir_.Sub("alternatives/cuda.new"));
  std::filesystem::rename(dir_.Sub("alternatives/cuda.new"),
                          dir_.Sub("alternatives/cuda"));
  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", toolkit_dirs), "");
  // The same spelling for another daemon's toolkit is answered for it.
  EXPECT_EQ(scanner.ToolkitDirOf(link + "/include", {dir_.Sub("mine/include")}),
            dir_.Sub("mine/include"));
}

TEST_F(IncludeScanTest, DirectoriesAreWatchedOnlyOnceStampChecksAddUp) {
  Write("u/a.h", "#include \"c.h\"\n");
  Write("u/c.h", "#define C 3\n");
  ScanInput input = Input("#include <a.h>\n", {"u"});
  IncludeScanner scanner(0, "", /*watch_after_stats=*/8);
  absl::SleepFor(absl::Milliseconds(30));
  ASSERT_TRUE(Files(scanner, input).ok());
  uint64_t last = scanner.stamp_checks();
  int checked = 0;
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(Files(scanner, input).ok());
    if (scanner.stamp_checks() > last) ++checked;
    last = scanner.stamp_checks();
  }
  // Each check covers a few stamps: a handful of checks, then none.
  EXPECT_GE(checked, 2);
  EXPECT_LE(checked, 8);
  EXPECT_EQ(scanner.walks(), 1u);
}

// Paths found absent where no directory exists (a program named into a
// directory that is not there, as generated sources are; a moved memo's
// absences, as CUB's through macro-named directories) are watched from the
// nearest directory that exists: an unchanged tree then costs no stats,
// and every absence is counted among the stats that lead to watching.
TEST_F(IncludeScanTest,
       AbsencesInDirectoriesThatDoNotExistAreWatchedFromAbove) {
  Write("u/a.h", "#define A 1\n");
  ScanInput input = Input("#include <a.h>\n", {"u"});
  input.program_name = "gen/kernels/prog.cu";  // no such directory
  IncludeScanner scanner(0, "", /*watch_after_stats=*/0);
  absl::SleepFor(absl::Milliseconds(30));
  ASSERT_TRUE(Files(scanner, input).ok());
  ASSERT_TRUE(Files(scanner, input).ok());  // checked, and watched
  const uint64_t checks = scanner.stamp_checks();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Files(scanner, input).ok());
  EXPECT_EQ(scanner.stamp_checks(), checks) << "answered without stats";
  EXPECT_EQ(scanner.walks(), 1u);
  // The program's file appears, directories and all: seen.
  Write("gen/kernels/prog.cu", "#include <a.h>\n");
  absl::SleepFor(absl::Milliseconds(30));
  PlainStatusOr<std::vector<ScannedFile>> now = Files(scanner, input);
  ASSERT_TRUE(now.ok());
  EXPECT_THAT(Paths(*now), ElementsAre("gen/kernels/prog.cu", "u/a.h"));
}

// A dangling link on the way is no directory that does not exist: what its
// target becomes could not be seen from above. The scan keeps checking its
// stamps, and sees the program's file appear behind it (a file it then
// refuses, as any read through a link).
TEST_F(IncludeScanTest, ADanglingLinkOnTheWayIsCheckedNotWatched) {
  Write("u/a.h", "#define A 1\n");
  std::filesystem::create_symlink(dir_.Sub("scratch/gen"), dir_.Sub("gen"));
  ScanInput input = Input("#include <a.h>\n", {"u"});
  input.program_name = "gen/kernels/prog.cu";
  IncludeScanner scanner(0, "", /*watch_after_stats=*/0);
  absl::SleepFor(absl::Milliseconds(30));
  ASSERT_TRUE(Files(scanner, input).ok());
  ASSERT_TRUE(Files(scanner, input).ok());
  Write("scratch/gen/kernels/prog.cu", "#include <a.h>\n");
  absl::SleepFor(absl::Milliseconds(30));
  PlainStatusOr<std::vector<ScannedFile>> now = Files(scanner, input);
  ASSERT_FALSE(now.ok()) << "the memo from before the file was answered";
  EXPECT_THAT(now.status().message(), HasSubstr("through a symbolic link"));
}

// Directories made one at a time under a program named into directories
// that do not exist, with scans between: each step is seen, and so is the
// file at the end.
TEST_F(IncludeScanTest, DirectoriesMadeOneAtATimeAreFollowedDown) {
  Write("u/a.h", "#define A 1\n");
  ScanInput input = Input("#include <a.h>\n", {"u"});
  input.program_name = "x/y/z/prog.cu";
  IncludeScanner scanner(0, "", /*watch_after_stats=*/0);
  absl::SleepFor(absl::Milliseconds(30));
  for (const char* dir : {"x", "x/y", "x/y/z"}) {
    ASSERT_TRUE(Files(scanner, input).ok());
    ASSERT_TRUE(Files(scanner, input).ok());
    std::filesystem::create_directory(dir_.Sub(dir));
    absl::SleepFor(absl::Milliseconds(30));
  }
  ASSERT_TRUE(Files(scanner, input).ok());
  Write("x/y/z/prog.cu", "#include <a.h>\n");
  absl::SleepFor(absl::Milliseconds(30));
  PlainStatusOr<std::vector<ScannedFile>> now = Files(scanner, input);
  ASSERT_TRUE(now.ok());
  EXPECT_THAT(Paths(*now), ElementsAre("u/a.h", "x/y/z/prog.cu"));
}

// A new process's first scan of a program scanned before is answered from
// the kept memo (no reading, no hashing) while nothing it depends on moved.
TEST_F(IncludeScanTest, ScansAreKeptForTheNextProcess) {
  Write("u/a.h", "#include \"c.h\"\n");
  Write("u/c.h", "#define C 3\n");
  const ScanInput input = Input("#include <a.h>\n", {"u"});
  // Where ~/.cache does not exist yet (a new account): made, private.
  const std::string memos = dir_.Sub("home/.cache/jitcache-scan");
  absl::SleepFor(absl::Milliseconds(30));

  IncludeScanner first(0, memos);
  PlainStatusOr<std::vector<ScannedFile>> scanned = Files(first, input);
  ASSERT_TRUE(scanned.ok()) << scanned.status();
  EXPECT_EQ(first.walks(), 1u);
  EXPECT_EQ(std::filesystem::status(memos).permissions() &
                std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  EXPECT_EQ(std::filesystem::status(dir_.Sub("home/.cache")).permissions() &
                std::filesystem::perms::all,
            std::filesystem::perms::owner_all);

  IncludeScanner next(0, memos);
  PlainStatusOr<std::vector<ScannedFile>> kept = Files(next, input);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(next.walks(), 0u) << "answered from the kept scan";
  EXPECT_THAT(Paths(*kept), ElementsAre("u/a.h", "u/c.h"));
  EXPECT_EQ((*kept)[1].digest, (*scanned)[1].digest);

  // Another program with the same headers: walked, but nothing read.
  IncludeScanner other_program(0, memos);
  const std::string other_source = "#include <a.h>\nint other;\n";
  ScanInput other_input = input;
  other_input.source = other_source;
  PlainStatusOr<std::vector<ScannedFile>> other =
      Files(other_program, other_input);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other_program.walks(), 1u);
  EXPECT_EQ(other_program.files_read(), 0u);
  EXPECT_EQ((*other)[1].digest, (*scanned)[1].digest);

  Write("u/c.h", "#define C 4\n");
  absl::SleepFor(absl::Milliseconds(30));
  IncludeScanner after_change(0, memos);
  PlainStatusOr<std::vector<ScannedFile>> changed = Files(after_change, input);
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(after_change.walks(), 1u);
  EXPECT_EQ(after_change.files_read(), 1u) << "c.h only";
  EXPECT_EQ((*changed)[1].digest, Digest::Of("#define C 4\n"));

  for (const auto& entry : std::filesystem::directory_iterator(memos)) {
    testing::WriteFile(entry.path().string(), "not a memo");
  }
  IncludeScanner after_damage(0, memos);
  PlainStatusOr<std::vector<ScannedFile>> rescanned =
      Files(after_damage, input);
  ASSERT_TRUE(rescanned.ok());
  EXPECT_EQ(after_damage.walks(), 1u);
  EXPECT_EQ((*rescanned)[1].digest, Digest::Of("#define C 4\n"));
}

// The compile sees only the files its request carries: every file the
// program may read is found and sent, wherever it lies (NVRTC reads files
// beside the program, by absolute path and above its -I directories too).
TEST_F(IncludeScanTest,
       EveryFileTheProgramMayReadIsSentWhatItCannotNameIsRefused) {
  IncludeScanner scanner(0);
  Write("u/sub/up.h", "#include \"../../outside.h\"\n");
  Write("outside.h", "int o;\n");
  PlainStatusOr<std::vector<ScannedFile>> outside =
      Files(scanner, Input("#include <sub/up.h>\n", {"u"}));
  ASSERT_TRUE(outside.ok()) << outside.status();
  EXPECT_THAT(Paths(*outside), ElementsAre("outside.h", "u/sub/up.h"));

  Write("next_to_program.h", "int p;\n");
  ScanInput local = Input("#include \"next_to_program.h\"\n", {"u"});
  local.program_name = dir_.Sub("prog.cu");
  PlainStatusOr<std::vector<ScannedFile>> beside = Files(scanner, local);
  ASSERT_TRUE(beside.ok()) << beside.status();
  EXPECT_THAT(Paths(*beside), ElementsAre("next_to_program.h"));

  const std::string absolute = "#include \"" + dir_.Sub("outside.h") + "\"\n";
  PlainStatusOr<std::vector<ScannedFile>> abs =
      Files(scanner, Input(absolute, {"u"}));
  ASSERT_TRUE(abs.ok()) << abs.status();
  EXPECT_THAT(Paths(*abs), ElementsAre("outside.h"));

  Write("u/macro.h", "#include SOMEWHERE_UNDEFINED\n");
  PlainStatusOr<std::vector<ScannedFile>> macro =
      Files(scanner, Input("#include <macro.h>\n", {"u"}));
  ASSERT_FALSE(macro.ok());
  EXPECT_THAT(macro.status().message(), HasSubstr("SOMEWHERE_UNDEFINED"));

  // Fine once -D gives the macro a header name.
  Write("u/there.h", "int t;\n");
  ScanInput defined = Input("#include <macro.h>\n", {"u"});
  defined.defines = {"SOMEWHERE_UNDEFINED=<there.h>"};
  PlainStatusOr<std::vector<ScannedFile>> ok = Files(scanner, defined);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(Paths(*ok), ElementsAre("u/macro.h", "u/there.h"));
}

TEST(IncludeScanParse, DirectivesAndObjectLikeDefines) {
  std::vector<IncludeScanner::Directive> directives;
  std::vector<IncludeScanner::Define> defines;
  IncludeScanner::Parse(
      "#include <a.h>\n"
      "  # include \"b.h\" /* comment */\n"
      "#include_next <c.h>\n"
      "#include HEADER // which\n"
      "#elif defined(X) && __has_include_next( \"d.h\" )\n"
      "#define HEADER <e.h>\n"
      "#define FN(x) <f.h>\n"
      "int x = 1; // #include <not_a_directive.h>\n",
      &directives, &defines);
  ASSERT_EQ(directives.size(), 5u);
  EXPECT_EQ(directives[0].kind, IncludeScanner::Directive::kAngle);
  EXPECT_EQ(directives[0].text, "a.h");
  EXPECT_EQ(directives[1].kind, IncludeScanner::Directive::kQuote);
  EXPECT_EQ(directives[1].text, "b.h");
  EXPECT_EQ(directives[2].kind, IncludeScanner::Directive::kAngleNext);
  EXPECT_EQ(directives[3].kind, IncludeScanner::Directive::kMacro);
  EXPECT_EQ(directives[3].text, "HEADER");
  EXPECT_EQ(directives[4].kind, IncludeScanner::Directive::kQuoteNext);
  EXPECT_EQ(directives[4].text, "d.h");
  ASSERT_EQ(defines.size(), 1u);
  EXPECT_EQ(defines[0].name, "HEADER");
  EXPECT_EQ(defines[0].body, "<e.h>");
}

// The kernel resolves a path as spelled: ".." after a symbolic link leaves
// the link's target, and ".." needs the directory before it. What the
// compile's view could not reproduce, and what the scan cannot tell from
// absent, are errors (the caller's NVRTC then compiles), never a guess.
std::string JoinNormalForTest(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

TEST_F(IncludeScanTest, PathsTheViewCannotReproduceAreRefused) {
  IncludeScanner scanner(0);
  Write("inc/h.h", "int h;\n");
  Write("deep/a/h.h", "int deep;\n");
  std::filesystem::create_directories(dir_.Sub("deep/a/b"));
  std::filesystem::create_directories(dir_.Sub("empty"));
  std::filesystem::create_directory_symlink(dir_.Sub("deep/a/b"),
                                            dir_.Sub("jump"));
  std::filesystem::create_directory_symlink(dir_.Sub("loop"), dir_.Sub("loop"));
  auto scan_with = [&](const std::string& spelled) {
    ScanInput input = Input("#include <h.h>\n", {});
    input.dirs.push_back(
        {JoinNormalForTest(dir_.Sub(spelled)), false, dir_.Sub(spelled)});
    return Files(scanner, input);
  };
  PlainStatusOr<std::vector<ScannedFile>> plain = scan_with("inc/../inc");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(Paths(*plain), ElementsAre("inc/h.h"));

  PlainStatusOr<std::vector<ScannedFile>> linked = scan_with("jump/..");
  ASSERT_FALSE(linked.ok());
  EXPECT_THAT(linked.status().message(), HasSubstr("symbolic link"));

  PlainStatusOr<std::vector<ScannedFile>> empty = scan_with("empty/../inc");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("none of its files"));

  PlainStatusOr<std::vector<ScannedFile>> loop = scan_with("loop");
  ASSERT_FALSE(loop.ok());
  EXPECT_THAT(loop.status().message(), HasSubstr("cannot tell whether"));
}

// A miss sends the files as they are when it reads them: one that vanished
// since the scan is an error (never a request without it), one that
// changed goes with its new bytes, which the daemon hashes into the key.
TEST_F(IncludeScanTest, FilesAreSentAsTheyAreWhenSentOrNotAtAll) {
  IncludeScanner scanner(0);
  Write("u/a.h", "#define A 1\n");
  PlainStatusOr<std::shared_ptr<const ScanResult>> scanned =
      scanner.Scan(Input("#include <a.h>\n", {"u"}));
  ASSERT_TRUE(scanned.ok()) << scanned.status();
  ASSERT_EQ((*scanned)->files.size(), 1u);

  Write("u/a.h", "#define A 2\n");
  v1::CompileRequest request;
  ASSERT_TRUE(AttachIncludedFiles(**scanned, &request).ok());
  ASSERT_EQ(request.included_files_size(), 1);
  EXPECT_EQ(request.included_files(0).contents(), "#define A 2\n");
  EXPECT_TRUE(request.included_set_sha256().empty())
      << "the daemon computes the set's digest from what it is sent";

  std::filesystem::remove(dir_.Sub("u/a.h"));
  v1::CompileRequest after_removal;
  absl::Status gone = AttachIncludedFiles(**scanned, &after_removal);
  EXPECT_EQ(gone.code(), absl::StatusCode::kFailedPrecondition) << gone;
  EXPECT_THAT(gone.message(), HasSubstr(dir_.Sub("u/a.h")));
}

// Directives as the preprocessor reads them, however they are written:
// digraphs, comments before and inside them, continuation lines; and no
// directive inside a comment or a string.
TEST(IncludeScanParse, DirectivesWrittenUnusually) {
  std::vector<IncludeScanner::Directive> directives;
  std::vector<IncludeScanner::Define> defines;
  IncludeScanner::Parse(
      "%:include \"digraph.h\"\n"
      "/* first */ # include \"comment.h\"\n"
      "#/**/include \"inner.h\"\n"
      "#inc\\\nlude \"continued.h\"\n"
      "/* a comment\n"
      "   over lines */ #include \"after_comment.h\"\n"
      "const char* s = \"/*\";\n"
      "#include \"after_string.h\"\n"
      "int n = 1'000'000; #include <not_a_directive.h>\n"
      "/*\n#include <commented_out.h>\n*/\n"
      "#define LONG \\\n  <long.h>\n",
      &directives, &defines);
  std::vector<std::string> names;
  for (const auto& d : directives) names.push_back(d.text);
  EXPECT_THAT(names,
              ElementsAre("digraph.h", "comment.h", "inner.h", "continued.h",
                          "after_comment.h", "after_string.h"));
  ASSERT_EQ(defines.size(), 1u);
  EXPECT_EQ(defines[0].name, "LONG");
  EXPECT_EQ(defines[0].body, "<long.h>");
}

}  // namespace
}  // namespace jitcache::internal

namespace jitcache::internal {
namespace {

// NVRTC stats the file the program's name names (CuPy writes the source
// there first) and writes its time into line information: the scan sends
// it, with the time its stat saw, and notices it appearing or changing,
// from a remembered scan as from a kept one.
TEST_F(IncludeScanTest, TheProgramsOwnFileIsFoundWithItsTime) {
  ScanInput input = Input("__global__ void k() {}\n", {});
  const std::string memos = dir_.Sub("memos");
  IncludeScanner scanner(0, memos);
  absl::SleepFor(absl::Milliseconds(30));
  PlainStatusOr<std::vector<ScannedFile>> none = Files(scanner, input);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());

  Write("prog.cu", "__global__ void k() {}\n");
  struct timespec times[2] = {{0, UTIME_OMIT}, {1'600'000'000, 123}};
  ASSERT_EQ(utimensat(AT_FDCWD, dir_.Sub("prog.cu").c_str(), times, 0), 0);
  PlainStatusOr<std::vector<ScannedFile>> own = Files(scanner, input);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_THAT(Paths(*own), ElementsAre("prog.cu"));
  EXPECT_EQ((*own)[0].mtime_ns, 1'600'000'000'000'000'123);
  EXPECT_EQ(scanner.walks(), 2u);

  IncludeScanner next(0, memos);
  PlainStatusOr<std::vector<ScannedFile>> kept = Files(next, input);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(next.walks(), 0u) << "answered from the kept scan";
  ASSERT_THAT(Paths(*kept), ElementsAre("prog.cu"));
  EXPECT_EQ((*kept)[0].mtime_ns, 1'600'000'000'000'000'123);

  times[1] = {1'600'000'001, 0};
  ASSERT_EQ(utimensat(AT_FDCWD, dir_.Sub("prog.cu").c_str(), times, 0), 0);
  PlainStatusOr<std::vector<ScannedFile>> touched = Files(next, input);
  ASSERT_TRUE(touched.ok());
  ASSERT_EQ(touched->size(), 1u);
  EXPECT_EQ((*touched)[0].mtime_ns, 1'600'000'001'000'000'000);
}

}  // namespace
}  // namespace jitcache::internal
