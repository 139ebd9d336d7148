// A scan made in one place answers the same program's scan in another
// place with the same layout (a new working directory, a CuPy-style
// temporary program name) exactly when a walk there would give the same
// answer: for each layout, the answer in place two through the memo of
// place one must equal a fresh walk's in place two, and the memo must be
// used where the files allow it and refused where they do not.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "client/include_scan/include_scan.h"
#include "common/place_anchor.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache::internal {
namespace {

// One place: the working directory and the program's name (where a
// CuPy-style program lives apart from it).
struct Place {
  std::string cwd;
  std::string program_name;
};

class MovableScanTest : public ::testing::Test {
 protected:
  // Writes `text` at `path` (absolute), making its directories.
  static void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    testing::WriteFile(path, text);
  }

  ScanInput Input(const Place& place, const std::string& source,
                  const std::vector<std::string>& dirs) {
    source_ = source;
    ScanInput input;
    input.cwd = place.cwd;
    input.program_name = place.program_name;
    input.source = source_;
    for (const std::string& d : dirs) {
      const std::string spelled = d[0] == '/' ? d : place.cwd + "/" + d;
      input.dirs.push_back({LexicallyNormal(spelled), false, spelled});
    }
    input.dirs.push_back({toolkit(), true, ""});
    input.toolkit_fingerprint = "toolkit";
    return input;
  }

  std::string toolkit() const { return root_.Sub("toolkit"); }
  std::string memos() const { return root_.Sub("memos"); }

  // Scans `one` with a scanner of its own (a process), then `two` with
  // another sharing its memos and with one that has none (a fresh walk);
  // the two answers in place two must be the same. Returns how many scans
  // in place two were answered by moving place one's.
  uint64_t MovedAndChecked(const Place& one, const Place& two,
                           const std::string& source,
                           const std::vector<std::string>& dirs) {
    {
      IncludeScanner first(0, memos());
      (void)first.Scan(Input(one, source, dirs));
    }
    IncludeScanner second(0, memos());
    IncludeScanner fresh(0, "");
    auto moved = second.Scan(Input(two, source, dirs));
    auto walked = fresh.Scan(Input(two, source, dirs));
    EXPECT_EQ(moved.status(), walked.status());
    if (moved.ok() && walked.ok()) {
      EXPECT_EQ((*moved)->set, (*walked)->set);
      EXPECT_EQ(Describe(**moved), Describe(**walked));
      // The moved answer is place two's own memo from now on: a third
      // process finds it by its place, with no walk and no move.
      IncludeScanner third(0, memos());
      auto again = third.Scan(Input(two, source, dirs));
      EXPECT_TRUE(again.ok());
      if (again.ok()) {
        EXPECT_EQ(Describe(**again), Describe(**walked));
      }
      EXPECT_EQ(third.walks() + third.moves(), 0u);
    }
    EXPECT_EQ(second.walks() + second.moves(), 1u);
    return second.moves();
  }

  static std::string Describe(const ScanResult& result) {
    std::string out;
    for (const ScannedFile& f : result.files) {
      out += f.path + " " + f.digest.Hex() + " " + std::to_string(f.mtime_ns) +
             "\n";
    }
    return out;
  }

  void SetUp() override {
    Write(toolkit() + "/tk.h", "#pragma once\n#include <tk_inner.h>\n");
    Write(toolkit() + "/tk_inner.h", "#pragma once\n");
  }

  // Both places' working directories with the same files in them.
  void InBoth(const std::string& relative, const std::string& text) {
    Write(a() + "/" + relative, text);
    Write(b() + "/" + relative, text);
  }
  std::string a() const { return root_.Sub("a/work"); }
  std::string b() const { return root_.Sub("bb/other/work"); }

  testing::TempDir root_;
  std::string source_;
};

TEST_F(MovableScanTest, ANewWorkingDirectoryWithTheSameFilesMoves) {
  InBoth("k.cu", "#include \"local.h\"\n");
  InBoth("local.h", "#include \"sub/deep.h\"\n#include <inc.h>\n");
  InBoth("sub/deep.h", "#include \"../local.h\"\n");
  InBoth("inc/inc.h", "#include <tk.h>\n");
  EXPECT_EQ(MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"},
                            "#include \"local.h\"\n#include <tk.h>\n", {"inc"}),
            1u);
}

TEST_F(MovableScanTest, ACuPyStyleTemporaryNameMoves) {
  const std::string shared = root_.Sub("shared/include");
  Write(shared + "/lib.h", "#include \"/" + shared.substr(1) + "/abs.h\"\n");
  Write(shared + "/abs.h", "int x;\n");
  const std::string one = root_.Sub("tmp/tmpAAAA/kern.cu");
  const std::string two = root_.Sub("tmp/tmpBBBBBB/kern.cu");
  Write(one, "x");
  Write(two, "x");
  EXPECT_EQ(
      MovedAndChecked({a(), one}, {a(), two}, "#include <lib.h>\n", {shared}),
      1u);
}

TEST_F(MovableScanTest, AProgramInASubdirectoryMoves) {
  InBoth("common/h.h", "int h;\n");
  EXPECT_EQ(MovedAndChecked({a(), "src/k.cu"}, {b(), "src/k.cu"},
                            "#include \"../common/h.h\"\n", {}),
            1u);
}

TEST_F(MovableScanTest, AbsoluteSearchDirectoriesIntoThePlaceMove) {
  InBoth("inc/inc.h", "int i;\n");
  // Each place names its own directory: the same key, anchored.
  const std::string source = "#include <inc.h>\n";
  {
    IncludeScanner first(0, memos());
    ASSERT_TRUE(first.Scan(Input({a(), "k.cu"}, source, {a() + "/inc"})).ok());
  }
  IncludeScanner second(0, memos());
  IncludeScanner fresh(0, "");
  auto moved = second.Scan(Input({b(), "k.cu"}, source, {b() + "/inc"}));
  auto walked = fresh.Scan(Input({b(), "k.cu"}, source, {b() + "/inc"}));
  ASSERT_TRUE(moved.ok() && walked.ok());
  EXPECT_EQ(Describe(**moved), Describe(**walked));
  EXPECT_EQ(second.moves(), 1u);
}

TEST_F(MovableScanTest, ADotDotOutOfTheWorkingDirectoryDoesNotMove) {
  Write(root_.Sub("a/outside/o.h"), "int a;\n");
  Write(root_.Sub("bb/other/outside/o.h"), "int a;\n");
  EXPECT_EQ(MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"}, "#include <o.h>\n",
                            {"../outside"}),
            0u);
}

TEST_F(MovableScanTest, AnAbsoluteNameIntoThePlaceDoesNotMove) {
  // The same text in both places names place one's file.
  InBoth("abs.h", "int a;\n");
  EXPECT_EQ(MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"},
                            "#include \"" + a() + "/abs.h\"\n", {}),
            0u);
}

TEST_F(MovableScanTest, OtherBytesThereDoNotMove) {
  Write(a() + "/h.h", "int one;\n");
  Write(b() + "/h.h", "int two;\n");
  EXPECT_EQ(
      MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"}, "#include \"h.h\"\n", {}),
      0u);
}

TEST_F(MovableScanTest, AHeaderThatShadowsThereDoesNotMove) {
  InBoth("inc/h.h", "int h;\n");
  // Found beside the program first in place two only.
  Write(b() + "/h.h", "int h;\n");
  EXPECT_EQ(MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"}, "#include \"h.h\"\n",
                            {"inc"}),
            0u);
}

TEST_F(MovableScanTest, AMacroIncludeFoundOnlyThereDoesNotMove) {
  InBoth("inc/pick.h", "#define WHICH \"chosen.h\"\n");
  Write(b() + "/inc/chosen.h", "int c;\n");
  EXPECT_EQ(MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"},
                            "#include <pick.h>\n#include WHICH\n", {"inc"}),
            0u);
}

TEST_F(MovableScanTest, TheProgramsOwnFileThereDoesNotMove) {
  InBoth("h.h", "int h;\n");
  Write(b() + "/k.cu", "int k;\n");  // absent in place one
  EXPECT_EQ(
      MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"}, "#include \"h.h\"\n", {}),
      0u);
}

TEST_F(MovableScanTest, ASymbolicLinkThereDoesNotMove) {
  Write(a() + "/inc/h.h", "int h;\n");
  Write(root_.Sub("real/h.h"), "int h;\n");
  std::filesystem::create_directories(b());
  ASSERT_EQ(::symlink(root_.Sub("real").c_str(), (b() + "/inc").c_str()), 0);
  // The walk there refuses the link; so must the move.
  EXPECT_EQ(MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"}, "#include <h.h>\n",
                            {"inc"}),
            0u);
}

TEST_F(MovableScanTest, ADotDotThroughADirectoryAboveThePlaceDoesNotMove) {
  // "/ROOT/a/.." is passed on the way: the walk allows it in place one
  // (it holds the working directory), not in place two.
  Write(root_.Sub("shared/x.h"), "int x;\n");
  InBoth("other.h", "");  // both working directories exist
  EXPECT_EQ(MovedAndChecked(
                {a(), "k.cu"}, {b(), "k.cu"},
                "#include \"" + root_.Sub("a/../shared/x.h") + "\"\n", {}),
            0u);
}

TEST_F(MovableScanTest, AnAbsoluteInMemoryHeaderNameInThePlaceDoesNotMove) {
  // Quoted includes resolve beside the header's name, which stays place
  // one's in place two.
  InBoth("gen/x.h", "int x;\n");
  const std::string header = a() + "/gen/h.h";
  const std::string body = "#include \"x.h\"\n";
  const std::string source = "#include \"" + header + "\"\n";
  auto input = [&](const Place& place) {
    ScanInput in = Input(place, source, {});
    in.header_names = {header};
    in.header_bodies = {body};
    return in;
  };
  {
    IncludeScanner first(0, memos());
    ASSERT_TRUE(first.Scan(input({a(), "k.cu"})).ok());
  }
  IncludeScanner second(0, memos());
  IncludeScanner fresh(0, "");
  auto moved = second.Scan(input({b(), "k.cu"}));
  auto walked = fresh.Scan(input({b(), "k.cu"}));
  ASSERT_TRUE(moved.ok() && walked.ok());
  EXPECT_EQ(Describe(**moved), Describe(**walked));
  EXPECT_EQ(second.moves(), 0u);
}

TEST_F(MovableScanTest, AToolkitFileReachedThroughThePlaceDoesNotMove) {
  // From place one, "../../toolkit" is the toolkit; from place two it is
  // nothing, and the user header the toolkit's file includes is not read.
  Write(toolkit() + "/tk_user.h", "#include <user.h>\n");
  InBoth("inc/user.h", "int u;\n");
  EXPECT_EQ(MovedAndChecked({a(), "k.cu"}, {b(), "k.cu"},
                            "#include \"../../toolkit/tk_user.h\"\n", {"inc"}),
            0u);
}

TEST_F(MovableScanTest, AWorkingDirectoryAtTheRootDoesNotMove) {
  EXPECT_FALSE(MovableRoots("/", "k.cu").has_value());
  EXPECT_FALSE(MovableRoots("/work", "/k.cu").has_value());
  EXPECT_FALSE(MovableRoots("relative", "k.cu").has_value());
  ASSERT_TRUE(MovableRoots("/w", "/t/k.cu").has_value());
  EXPECT_EQ(MovableRoots("/w", "/t/k.cu")->program_dir, "/t");
  EXPECT_EQ(MovableRoots("/w", "s/../k.cu")->program_dir, "/w");
}

TEST(PlaceAnchor, PathsMoveOnlyWhenTheyStayInTheirRoot) {
  const PlaceRoots roots{"/w/prog", "/w"};
  EXPECT_EQ(AnchorSpelled(roots, "/w/prog/a/../b.h"), "P:a/../b.h");
  EXPECT_EQ(AnchorSpelled(roots, "/w/inc/b.h"), "C:inc/b.h");
  EXPECT_EQ(AnchorSpelled(roots, "/w"), "C:");
  EXPECT_EQ(AnchorSpelled(roots, "/elsewhere/x.h"), "/elsewhere/x.h");
  // Out of the inner root but not the outer one: the outer one's.
  EXPECT_EQ(AnchorSpelled(roots, "/w/prog/../a/x.h"), "C:prog/../a/x.h");
  EXPECT_EQ(AnchorSpelled(roots, "/w/a/../prog/x.h"), "C:a/../prog/x.h");
  // Out of the outer root on the way, into a root from outside: no
  // anchored form.
  EXPECT_EQ(AnchorSpelled(roots, "/w/../w/x.h"), std::nullopt);
  EXPECT_EQ(AnchorSpelled(roots, "/w/prog/../../w/x.h"), std::nullopt);
  EXPECT_EQ(AnchorSpelled(roots, "/elsewhere/../w/x.h"), std::nullopt);
  EXPECT_EQ(AnchorSpelled(roots, "relative.h"), std::nullopt);
  EXPECT_EQ(UnanchorSpelled({"/t/p", "/v"}, "P:a/../b.h"), "/t/p/a/../b.h");
  EXPECT_EQ(UnanchorSpelled({"/t/p", "/v"}, "C:"), "/v");
  EXPECT_EQ(UnanchorSpelled({"/t/p", "/v"}, "/x"), "/x");
  EXPECT_TRUE(HoldsARoot(roots, "/"));
  EXPECT_FALSE(HoldsARoot(roots, "/w"));  // the outer root itself
  EXPECT_TRUE(HoldsARoot({"/t/p", "/v/w"}, "/v"));
  EXPECT_FALSE(HoldsARoot(roots, "/w2"));
}

}  // namespace
}  // namespace jitcache::internal
