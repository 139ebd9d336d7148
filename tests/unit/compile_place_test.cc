#include "common/compile_place.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

TEST(CompilePlace, PathsAreAnchoredAtTheProgramThenTheWorkingDirectory) {
  const CompilePlace place("/home/ada/proj", "/tmp/tmpab12/kern.cu");
  EXPECT_EQ(place.program_dir(), "/tmp/tmpab12");
  EXPECT_EQ(place.Anchored("/tmp/tmpab12/kern.h"), "P:kern.h");
  EXPECT_EQ(place.Anchored("/tmp/tmpab12"), "P:");
  EXPECT_EQ(place.Anchored("/home/ada/proj/inc/a.h"), "C:inc/a.h");
  EXPECT_EQ(place.Anchored("/opt/lib/include/b.h"), "/opt/lib/include/b.h");
  EXPECT_EQ(place.Anchored("/tmp/tmpab123/x.h"), "/tmp/tmpab123/x.h")
      << "by whole names, not by text";
  for (const char* path : {"/tmp/tmpab12/kern.h", "/home/ada/proj/inc/a.h",
                           "/opt/lib/include/b.h", "/home/ada/proj"}) {
    EXPECT_EQ(place.Absolute(place.Anchored(path)), path);
  }
  EXPECT_EQ(place.Absolute("P:../x.h"), "/tmp/x.h");
  EXPECT_EQ(place.Absolute("C:/x"), std::nullopt);
  EXPECT_EQ(place.Absolute("relative/x.h"), std::nullopt);
  EXPECT_EQ(place.Absolute("/a/../b"), std::nullopt);
}

TEST(CompilePlace, ARelativeNameLiesInTheWorkingDirectory) {
  const CompilePlace place("/home/ada/proj", "sub/kern.cu");
  EXPECT_EQ(place.program_dir(), "/home/ada/proj/sub");
  EXPECT_EQ(place.layout(), CompilePlace::Layout::kProgramInCwd);
  EXPECT_EQ(place.Anchored("/home/ada/proj/sub/k.h"), "P:k.h");
  EXPECT_EQ(place.Anchored("/home/ada/proj/k.h"), "C:k.h");
  EXPECT_EQ(CompilePlace("/home/ada/proj", "../kern.cu").layout(),
            CompilePlace::Layout::kCwdInProgram);
  // No working directory: the compile runs in "/".
  EXPECT_EQ(CompilePlace("", "kern.cu").Anchored("/usr/include/x.h"),
            "P:usr/include/x.h");
  EXPECT_EQ(CompilePlace("", "kern.cu").cwd(), "");
}

TEST(CompilePlace, TheProgramIsKeyedByItsNameWithoutThePlace) {
  // An absolute name: its directory is the place.
  const std::string key =
      CompilePlace("/a", "/tmp/tmpabc/kern.cu").ProgramForKey();
  EXPECT_EQ(key, "P:kern.cu\napart");
  EXPECT_EQ(CompilePlace("/b/c", "/tmp/tmpxyz/kern.cu").ProgramForKey(), key);
  EXPECT_NE(CompilePlace("/a", "/tmp/tmpabc/other.cu").ProgramForKey(), key);
  // A relative one as spelled: NVRTC shows the spelling.
  EXPECT_EQ(CompilePlace("/a", "kern.cu").ProgramForKey(),
            "rel:kern.cu\nprogram in cwd at ");
  EXPECT_EQ(CompilePlace("/b/c", "kern.cu").ProgramForKey(),
            CompilePlace("/a", "kern.cu").ProgramForKey());
  EXPECT_NE(CompilePlace("/b", "dir/kern.cu").ProgramForKey(),
            CompilePlace("/b", "kern.cu").ProgramForKey());
  // How the directories lie is kept: a header found beside the program in
  // one layout is found through the working directory in another.
  EXPECT_NE(CompilePlace("/v", "/v/a/b/kern.cu").ProgramForKey(),
            CompilePlace("/w", "/w/src/kern.cu").ProgramForKey());
  EXPECT_EQ(CompilePlace("/v", "/v/src/kern.cu").ProgramForKey(),
            CompilePlace("/w/x", "/w/x/src/kern.cu").ProgramForKey());
}

// A caller in the directories the proof uses would be compared with
// itself: no proof.
TEST(CompilePlace, NoProofForACallerWhereTheOtherPlaceIsMade) {
  EXPECT_EQ(CompilePlace("/.jitcache-elsewhere/w0rk/d1r/s0me/d3pth", "k.cu")
                .Elsewhere({}),
            std::nullopt);
  EXPECT_EQ(
      CompilePlace("/home/a", "/.jitcache-elsewhere/pr0g/k.cu").Elsewhere({}),
      std::nullopt);
  EXPECT_EQ(CompilePlace("/home/a", "/.jitcache-elsewhere/pr0g/k.cu")
                .ElsewhereButTheWorkingDirectory({}),
            std::nullopt);
}

// The proof compile's place: the same layout, elsewhere, the program named
// by an absolute path, every file coming back anchored the same way.
TEST(CompilePlace, ElsewhereKeepsTheLayoutAndMovesEverything) {
  struct Case {
    const char* cwd;
    const char* name;
  } cases[] = {{"/home/ada/proj", "kern.cu"},
               {"/home/ada/proj", "sub/kern.cu"},
               {"/home/ada/proj/w", "../kern.cu"},
               {"/home/ada/proj", "/tmp/tmpab12/kern.cu"},
               {"", "kern.cu"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.cwd) + " " + c.name);
    const CompilePlace here(c.cwd, c.name);
    const std::vector<std::string> files = {"P:k.h", "P:inc/deep/x.h",
                                            "/opt/lib/y.h"};
    std::optional<CompilePlace> there = here.Elsewhere(files);
    ASSERT_TRUE(there.has_value());
    EXPECT_EQ(there->layout(), here.layout());
    EXPECT_EQ(there->ProgramForKey(), here.ProgramForKey());
    EXPECT_EQ(there->program_name()[0] == '/', c.name[0] == '/');
    EXPECT_NE(there->cwd(), here.cwd());
    EXPECT_NE(there->program_dir(), here.program_dir());
    EXPECT_EQ(there->program_dir().rfind(
                  std::string(CompilePlace::kElsewhereRoot), 0),
              0u);
    for (const std::string& f : files) {
      EXPECT_EQ(there->Anchored(*there->Absolute(f)), f);
    }
  }
  // A file where the other place is made cannot be laid out there.
  EXPECT_EQ(CompilePlace("/a", "k.cu").Elsewhere({"/.jitcache-elsewhere/x.h"}),
            std::nullopt);
  // Nor one whose anchor has no room above the root.
  EXPECT_EQ(CompilePlace("/a", "k.cu").Elsewhere({"P:../../../../../x.h"}),
            std::nullopt);
}

// The program's own file is anchored by what it is, not by its name, and
// the name-free key holds the name's extension and spelled directories
// alone.
TEST(CompilePlace, TheProgramsOwnFileAndTheNameFreeKeyHoldNoName) {
  const CompilePlace abs("/home/ada/proj", "/tmp/tmpab12/kern.cu");
  EXPECT_EQ(abs.Anchored("/tmp/tmpab12/kern.cu"), "F:");
  EXPECT_EQ(abs.Absolute("F:"), "/tmp/tmpab12/kern.cu");
  EXPECT_EQ(abs.Anchored("/tmp/tmpab12/kern.cuh"), "P:kern.cuh");
  const CompilePlace rel("/home/ada/proj", "sub/kern.cu");
  EXPECT_EQ(rel.Anchored("/home/ada/proj/sub/kern.cu"), "F:");
  EXPECT_EQ(rel.Absolute("F:"), "/home/ada/proj/sub/kern.cu");
  EXPECT_EQ(CompilePlace("/a", "dir/").Absolute("F:"), std::nullopt)
      << "a name that names no file";
  EXPECT_EQ(CompilePlace("/a", "dir/").Anchored("/a/dir"), "P:");

  auto free = [](const char* cwd, const char* name) {
    return CompilePlace(cwd, name).ProgramWithoutNameForKey();
  };
  EXPECT_EQ(free("/a", "/tmp/x/kern.cu"), free("/b", "/tmp/y/s.cu"));
  EXPECT_EQ(free("/a", "kern.cu"), free("/b", "other.cu"));
  EXPECT_EQ(free("/a", "sub/kern.cu"), free("/b", "sub/s.cu"));
  EXPECT_NE(free("/a", "sub/kern.cu"), free("/a", "kern.cu"));
  EXPECT_NE(free("/a", "kern.cu"), free("/a", "kern.cuh"));
  EXPECT_NE(free("/a", "kern.cu"), free("/a", "/tmp/x/kern.cu"));
  EXPECT_EQ(free("/a", "default_program"), free("/a", "other"));
  // Never the text of a key with a name, whatever the name.
  for (const char* name : {"*.cu", "any name rel:*.cu", "/t/*.cu", "kern.cu"}) {
    EXPECT_NE(CompilePlace("/a", name).ProgramForKey(), free("/a", "k.cu"));
    EXPECT_NE(CompilePlace("/a", name).ProgramForKey(), free("/a", "/t/k.cu"));
  }
}

TEST(CompilePlace, ARenamedProgramKeepsItsExtensionAndChangesItsLength) {
  for (const char* base : {"kern.cu", "r.cu", "default_program", ".cu",
                           "a.b.cu", "r3n4m3d_kern_x9.cu"}) {
    SCOPED_TRACE(base);
    const std::string renamed = CompilePlace::RenamedProgram(base);
    EXPECT_NE(renamed, base);
    EXPECT_NE(renamed.size(), std::string(base).size());
    EXPECT_NE(renamed[0], base[0]);
    const std::string_view b(base);
    const size_t dot = b.rfind('.');
    if (dot != std::string_view::npos && dot > 0) {
      EXPECT_TRUE(renamed.ends_with(b.substr(dot)));
    }
  }
}

// The first proof's place: elsewhere and under another name, the program's
// own file with it.
TEST(CompilePlace, ElsewhereUnderAnotherNameMovesTheProgramsFileToo) {
  for (const char* name : {"kern.cu", "sub/kern.cu", "/tmp/tmpab12/kern.cu"}) {
    SCOPED_TRACE(name);
    const CompilePlace here("/home/ada/proj", name);
    const std::vector<std::string> files = {"F:", "P:k.h", "/opt/lib/y.h"};
    std::optional<CompilePlace> there =
        here.Elsewhere(files, CompilePlace::Name::kRenamed);
    ASSERT_TRUE(there.has_value());
    EXPECT_EQ(there->ProgramWithoutNameForKey(),
              here.ProgramWithoutNameForKey());
    EXPECT_NE(there->ProgramForKey(), here.ProgramForKey());
    EXPECT_EQ(there->layout(), here.layout());
    EXPECT_EQ(*there->Absolute("F:"),
              JoinLexically(there->cwd(), there->program_name()));
    EXPECT_TRUE(there->Absolute("F:")->ends_with(
        "/" + CompilePlace::RenamedProgram("kern.cu")));
    EXPECT_EQ(there->Anchored(*there->Absolute("F:")), "F:");
  }
  EXPECT_EQ(
      CompilePlace("/a", "dir/").Elsewhere({}, CompilePlace::Name::kRenamed),
      std::nullopt)
      << "a name that names no file has no other";
}

// The second proof's place: the program's directory moves alone.
TEST(CompilePlace, OnlyAProgramApartFromTheWorkingDirectoryMovesAlone) {
  const CompilePlace cupy("/home/ada/job", "/tmp/tmpab12/kern.cu");
  std::optional<CompilePlace> there =
      cupy.ElsewhereButTheWorkingDirectory({"P:k.h", "C:inc/i.h", "/opt/x.h"});
  ASSERT_TRUE(there.has_value());
  EXPECT_EQ(there->cwd(), "/home/ada/job");
  EXPECT_NE(there->program_dir(), cupy.program_dir());
  EXPECT_EQ(there->Absolute("C:inc/i.h"), "/home/ada/job/inc/i.h");
  EXPECT_EQ(there->ProgramForKey(), cupy.ProgramForKey());
  // A program in the working directory, or named relative to it, moves
  // with it.
  EXPECT_EQ(CompilePlace("/home/ada/job", "kern.cu")
                .ElsewhereButTheWorkingDirectory({}),
            std::nullopt);
  EXPECT_EQ(CompilePlace("/home/ada/job", "/home/ada/job/sub/kern.cu")
                .ElsewhereButTheWorkingDirectory({}),
            std::nullopt);
}

TEST(CompilePlace, JoinLexicallyResolvesDotsByText) {
  EXPECT_EQ(JoinLexically("/a/b", "../c/./d"), "/a/c/d");
  EXPECT_EQ(JoinLexically("/a", "/x/y"), "/x/y");
  EXPECT_EQ(JoinLexically("/", "../.."), "/");
  EXPECT_EQ(JoinLexically("/a/", ""), "/a");
}

}  // namespace
}  // namespace jitcache
