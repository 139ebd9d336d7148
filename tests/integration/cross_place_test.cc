// The real NVRTC is the oracle, both ways, for where an answer is shared.
// Every variant of the NVRTC corpus is compiled by the real NVRTC in two
// places, each in a fresh process: another working directory with the same
// relative layout, a CuPy-style temporary program name (the source written
// to a file in a fresh temporary directory), or both; and through
// jitcache's libnvrtc.so.13 in place one, then in a new process in place
// two. Between the two places the headers in a directory outside both
// (an absolute -I) get another modification time, as the corpus files of
// the second place have: equal bytes, other times.
//
// In place two, where the two real results are equal (apart from what the
// real NVRTC varies per process), every answer the daemon gives must be a
// hit; where they differ, no variant may be answered by hits alone, and
// every result must be the real place-two result.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/integration/nvrtc_corpus.h"
#include "tests/integration/nvrtc_oracle.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::FirstDifference;
using ::testing::IsEmpty;
using testing::ProcessResult;
using testing::Variant;
using testing::WithoutRunNoise;

// One place: a corpus written under `root`, its case file there (the
// working directory of its cases), and where results go.
struct Place {
  std::string root;
  std::vector<Variant> corpus;
  std::string cases;
};

// How one of a variant's answers was served ("HIT", "MISS", "JOINED",
// "LOCAL") and under which key.
struct Answered {
  std::string how, key;
};

// Each variant's answers in a run of ours, by case id, from the lines the
// front end prints with JITCACHE_NVRTC_VERBOSE after each case's name.
std::map<std::string, std::vector<Answered>> ServedByCase(
    const std::string& output) {
  static const std::regex kServed(
      ": (HIT|MISS|JOINED|LOCAL) (ptx|cubin|ltoir) key ([0-9a-f]+)$");
  std::map<std::string, std::vector<Answered>> out;
  std::string current;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::ConsumePrefix(&line, "jitcache-case: ")) {
      current = std::string(line);
      continue;
    }
    std::smatch m;
    const std::string text(line);
    if (absl::StartsWith(text, "jitcache-nvrtc: ") &&
        std::regex_search(text, m, kServed)) {
      out[current].push_back({m[1], m[3]});
    }
  }
  return out;
}

// A result with the program's name taken out of its log ("log CODE SIZE\n"
// and the bytes, in a case runner's result file; its size left out): what
// the daemon keeps once for every name. The object keeps the name.
std::string WithoutName(const std::string& result, const std::string& name) {
  const size_t at = result.find("\nlog ");
  if (name.size() < 3 || at == std::string::npos) return result;
  const size_t code_end = result.find(' ', at + 5);
  const size_t line_end = result.find('\n', at + 5);
  if (code_end == std::string::npos || line_end == std::string::npos ||
      code_end > line_end) {
    return result;
  }
  size_t size = 0;
  if (!absl::SimpleAtoi(result.substr(code_end + 1, line_end - code_end - 1),
                        &size)) {
    return result;
  }
  const std::string log = result.substr(line_end + 1, size);
  return absl::StrCat(result.substr(0, code_end), "\n",
                      absl::StrReplaceAll(log, {{name, "<program>"}}),
                      result.substr(line_end + 1 + log.size()));
}

// The program's name of variant `id` in `place` ("" for none).
std::string NameOf(const Place& place, const std::string& id) {
  for (const Variant& v : place.corpus) {
    if (v.id == id) return v.name.value_or("");
  }
  return "";
}

// The PTX of a case runner's result file ("ptx RESULT SIZE\n" and the
// bytes), without the NUL NVRTC counts.
std::string PtxOf(const std::string& result) {
  const size_t at = result.find("\nptx 0 ");
  if (at == std::string::npos) return "";
  const size_t start = result.find('\n', at + 1) + 1;
  const size_t size = std::stoul(result.substr(at + 7, start - at - 8));
  return std::string(result.substr(start, size).c_str());
}

class CrossPlace : public ::testing::Test {
 protected:
  std::vector<std::string> Env(const std::string& socket) const {
    return {"/usr/bin/env",
            std::string("LD_LIBRARY_PATH=") + JITCACHE_NVRTC_DIR,
            "JITCACHE_SCAN_CACHE=" + root_.Sub("scans"),
            "JITCACHE_SOCKET=" + socket,
            "JITCACHE_NVRTC_VERBOSE=1",
            "JITCACHE_CASE_TRACE=1"};
  }

  // `renamed`: every named program under another name (RenamePrograms).
  Place MakePlace(const std::string& root, const std::string& cases_name,
                  const std::string& temp_dir, bool renamed = false) {
    Place place;
    place.root = root;
    place.corpus = testing::BuildCorpus(root, 0, shared_);
    // A variant that compiles its program twice (the front end's program
    // state, which the differential test covers) has two answers in one
    // result; the verdicts below judge one answer per variant.
    std::erase_if(place.corpus,
                  [](const Variant& v) { return !v.again.empty(); });
    // JITCACHE_CORPUS_ONLY=REGEX: only the variants whose id matches (to
    // look into a few).
    if (const char* only = std::getenv("JITCACHE_CORPUS_ONLY");
        only != nullptr && *only != '\0') {
      const std::regex keep(only);
      std::erase_if(place.corpus, [&](const Variant& v) {
        return !std::regex_search(v.id, keep);
      });
    }
    if (renamed) testing::RenamePrograms(place.corpus, root);
    if (!temp_dir.empty()) {
      testing::NameAfterTemporaryFiles(place.corpus, temp_dir);
    }
    place.cases = root + "/" + cases_name;
    testing::WriteCaseFile(place.corpus, place.cases, false);
    return place;
  }

  // The real NVRTC, then ours, in `place`; ours' output returned.
  std::string RunBoth(const Place& place, const std::string& socket,
                      const std::string& real, const std::string& ours) {
    std::vector<std::string> ids;
    for (const Variant& v : place.corpus) ids.push_back(v.id);
    EXPECT_EQ(testing::RunEachCase({}, place.cases, real, ids), "");
    std::filesystem::create_directories(ours);
    std::vector<std::string> argv = Env(socket);
    argv.insert(argv.end(), {JITCACHE_NVRTC_CASE, place.cases, ours});
    ProcessResult r = testing::RunProcess(argv, absl::Minutes(15));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  }

  // Moves the modification time of every file under the shared directory.
  void TouchShared() {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(shared_)) {
      if (!entry.is_regular_file()) continue;
      std::filesystem::last_write_time(
          entry.path(), std::filesystem::last_write_time(entry.path()) +
                            std::chrono::seconds(10));
    }
  }

  // What a run of both places found, variant by variant.
  struct Verdicts {
    std::vector<std::string> wrong;       // a result not the real NVRTC's
    std::vector<std::string> false_hits;  // place one's answers, bytes differ
    std::vector<std::string> missed;      // the same bytes, not all hits
    std::string why;  // the daemon's reasons for what it kept for a place
    int shareable = 0, dependent = 0;
    bool whole_corpus = true;  // not narrowed by JITCACHE_CORPUS_ONLY
  };

  // Runs `one` then `two` against a daemon of their own and judges every
  // variant, printing the counts.
  Verdicts Compare(const std::string& mode, const Place& one,
                   const Place& two) {
    Verdicts out;
    out.whole_corpus = std::getenv("JITCACHE_CORPUS_ONLY") == nullptr;
    testing::DaemonProcess daemon(root_.Sub(mode + ".sock"), ":memory:",
                                  {"--workers=2", "--log_level=debug"});
    if (!daemon.Start().ok()) {
      ADD_FAILURE() << daemon.Log();
      return out;
    }
    const std::string dir = root_.Sub("out-" + mode);
    const std::map<std::string, std::vector<Answered>> first = ServedByCase(
        RunBoth(one, daemon.socket(), dir + "/real1", dir + "/ours1"));
    std::set<std::string> keys_of_place_one;
    for (const auto& [id, answers] : first) {
      for (const Answered& s : answers) keys_of_place_one.insert(s.key);
    }
    // A miss answered before its proof ended named its place's key; once
    // every proof has ended, place one asked again names the final keys
    // (hits), so that a hit of place two on any of them is seen.
    EXPECT_TRUE(testing::ProofsSettled(daemon.socket()));
    {
      std::filesystem::create_directories(dir + "/ours1-again");
      std::vector<std::string> argv = Env(daemon.socket());
      argv.insert(argv.end(),
                  {JITCACHE_NVRTC_CASE, one.cases, dir + "/ours1-again"});
      ProcessResult again = testing::RunProcess(argv, absl::Minutes(15));
      EXPECT_EQ(again.exit_code, 0) << again.output;
      for (const auto& [id, answers] : ServedByCase(again.output)) {
        for (const Answered& s : answers) keys_of_place_one.insert(s.key);
      }
    }
    TouchShared();
    const std::map<std::string, std::vector<Answered>> served = ServedByCase(
        RunBoth(two, daemon.socket(), dir + "/real2", dir + "/ours2"));

    int hit = 0, unasked = 0;
    for (const Variant& v : two.corpus) {
      for (const auto& [real, ours] :
           {std::pair<std::string, std::string>{"/real1/", "/ours1/"},
            {"/real2/", "/ours2/"}}) {
        const std::string d =
            FirstDifference(dir + real + v.id, dir + ours + v.id);
        if (!d.empty()) {
          out.wrong.push_back(
              absl::StrCat(v.id, " (", v.Describe(), ") ", real, ": ", d));
        }
      }
      // The same, or the same but for the program's name in the log: one
      // answer, written for each caller's name.
      const bool equal =
          WithoutRunNoise(WithoutName(testing::ReadFile(dir + "/real1/" + v.id),
                                      NameOf(one, v.id))) ==
          WithoutRunNoise(WithoutName(testing::ReadFile(dir + "/real2/" + v.id),
                                      v.name.value_or("")));
      auto it = served.find(v.id);
      if (it == served.end()) {
        ++unasked;  // the real NVRTC answered in the caller's process
        continue;
      }
      const std::vector<Answered>& answers = it->second;
      const bool all_hits =
          std::all_of(answers.begin(), answers.end(),
                      [](const Answered& s) { return s.how == "HIT"; });
      // Every answer the one place one got: the whole result came from
      // there. (A hit on a key of place two's own, made by an earlier
      // variant of the same request, is no such thing.)
      const bool from_place_one =
          std::all_of(answers.begin(), answers.end(), [&](const Answered& s) {
            return s.how == "HIT" && keys_of_place_one.contains(s.key);
          });
      if (equal) {
        ++out.shareable;
        if (all_hits) {
          ++hit;
        } else {
          std::string how;
          for (const Answered& s : answers) absl::StrAppend(&how, " ", s.how);
          out.missed.push_back(
              absl::StrCat(v.id, " (", v.Describe(), "):", how));
        }
      } else {
        ++out.dependent;
        if (from_place_one) {
          out.false_hits.push_back(absl::StrCat(v.id, " (", v.Describe(), ")"));
        }
      }
    }
    const DaemonStats stats = testing::StatsOf(daemon.socket());
    std::cout << mode << ": " << two.corpus.size() << " variants; "
              << out.shareable << " give the same bytes from the real NVRTC in "
              << "both places, " << hit << " of them hit in place two; "
              << out.dependent << " differ; " << unasked
              << " answered by the real NVRTC in the caller. Daemon: "
              << stats.place_proofs << " proofs, " << stats.place_shared
              << " shared, " << stats.place_kept << " kept for their place ("
              << stats.place_name_kept << " for their program's name)\n";
    // Why the daemon kept answers for their place, from its log.
    for (absl::string_view line : absl::StrSplit(daemon.Log(), '\n')) {
      if (absl::StrContains(line, "depends on its place")) {
        absl::StrAppend(&out.why, line.substr(0, 600), "\n");
      }
    }
    return out;
  }

  testing::TempDir root_;
  const std::string shared_ = root_.Sub("shared/include");
};

// Every result is the real NVRTC's in its own place, no variant gets place
// one's answers where the real bytes differ, and every one whose real bytes
// are the same hits; the corpus has both kinds.
TEST_F(CrossPlace, AnotherWorkingDirectoryWithTheSameLayout) {
  const Verdicts v =
      Compare("directory", MakePlace(root_.Sub("a/one"), "d.cases", ""),
              MakePlace(root_.Sub("b/two/deeper"), "d.cases", ""));
  EXPECT_THAT(v.wrong, IsEmpty());
  EXPECT_THAT(v.false_hits, IsEmpty());
  EXPECT_THAT(v.missed, IsEmpty()) << "the daemon's reasons:\n" << v.why;
  EXPECT_TRUE(!v.whole_corpus || (v.shareable > 40 && v.dependent > 10));
}

TEST_F(CrossPlace, ACuPyStyleTemporaryProgramName) {
  const Verdicts v = Compare(
      "temporary-name",
      MakePlace(root_.Sub("a/one"), "t1.cases", root_.Sub("tmp/tmpk3j4h5g6")),
      MakePlace(root_.Sub("a/one"), "t2.cases", root_.Sub("tmp/tmpz9x8c7v6")));
  EXPECT_THAT(v.wrong, IsEmpty());
  EXPECT_THAT(v.false_hits, IsEmpty());
  EXPECT_THAT(v.missed, IsEmpty()) << "the daemon's reasons:\n" << v.why;
  EXPECT_TRUE(!v.whole_corpus || (v.shareable > 40 && v.dependent > 10));
}

// Another directory and another temporary name, under another base name
// (a random temporary file, as cuda.core's tests name their programs).
TEST_F(CrossPlace, BothAnotherDirectoryAndAnotherTemporaryName) {
  const Verdicts v = Compare(
      "both",
      MakePlace(root_.Sub("a/one"), "b1.cases", root_.Sub("tmp/tmpq1w2e3r4")),
      MakePlace(root_.Sub("b/two/deeper"), "b2.cases",
                root_.Sub("var/tmp/tmpp0o9i8u7"), /*renamed=*/true));
  EXPECT_THAT(v.wrong, IsEmpty());
  EXPECT_THAT(v.false_hits, IsEmpty());
  EXPECT_THAT(v.missed, IsEmpty()) << "the daemon's reasons:\n" << v.why;
  EXPECT_TRUE(!v.whole_corpus || (v.shareable > 40 && v.dependent > 10));
}

// The same programs under other names (kern.cu, then another), relative to
// another working directory with the same layout: the name is keyed only
// where the real NVRTC's answer shows it.
TEST_F(CrossPlace, AnotherProgramNameInAnotherDirectory) {
  const Verdicts v =
      Compare("renamed", MakePlace(root_.Sub("a/one"), "r1.cases", ""),
              MakePlace(root_.Sub("b/two/deeper"), "r2.cases", "",
                        /*renamed=*/true));
  EXPECT_THAT(v.wrong, IsEmpty());
  EXPECT_THAT(v.false_hits, IsEmpty());
  EXPECT_THAT(v.missed, IsEmpty()) << "the daemon's reasons:\n" << v.why;
  EXPECT_TRUE(!v.whole_corpus || (v.shareable > 40 && v.dependent > 10));
}

// A header the program spells by its absolute path inside its own place:
// no proof elsewhere can move it (the spelling stays), so the answer was
// kept under the place's key with every file's time, and a `touch` made the
// same bytes a miss. Now a proof here with other times tells: without line
// information the real NVRTC's bytes do not depend on the times, and the
// touched header is a hit with the real bytes; with -lineinfo they do (the
// header's time is in the line table), and it is a miss with the real
// NVRTC's new bytes.
TEST_F(CrossPlace,
       AHeaderSpelledByItsAbsolutePathInsideThePlaceIsKeyedByItsBytes) {
  const std::string place = root_.Sub("abs/place");
  std::filesystem::create_directories(place + "/inc");
  const std::string header = place + "/inc/abs_inside.h";
  // Code, not only a macro: line information then names the header.
  testing::WriteFile(header,
                     "__device__ int abs_inside(int a) { return a + 41; }\n");
  std::vector<Variant> corpus;
  for (const char* option : {"-w", "-lineinfo"}) {
    Variant v;
    v.id = absl::StrCat("abs-inside", option);
    v.name = "kern.cu";
    v.source = absl::StrCat("#include \"", header,
                            "\"\nextern \"C\" __global__ void k(int* x) "
                            "{ x[0] = abs_inside(x[1]); }\n");
    v.options = {"-arch=sm_90", option};
    corpus.push_back(std::move(v));
  }
  const std::string cases = place + "/abs.cases";
  testing::WriteCaseFile(corpus, cases, false);
  std::vector<std::string> ids;
  for (const Variant& v : corpus) ids.push_back(v.id);
  testing::DaemonProcess daemon(
      root_.Sub("abs.sock"), ":memory:", {"--workers=2", "--log_level=debug"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  const std::string dir = root_.Sub("out-abs");
  auto ours = [&](const std::string& out) {
    std::filesystem::create_directories(out);
    std::vector<std::string> argv = Env(daemon.socket());
    argv.insert(argv.end(), {JITCACHE_NVRTC_CASE, cases, out});
    ProcessResult r = testing::RunProcess(argv, absl::Minutes(5));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return ServedByCase(r.output);
  };
  EXPECT_EQ(testing::RunEachCase({}, cases, dir + "/real1", ids), "");
  ours(dir + "/ours1");
  EXPECT_TRUE(testing::ProofsSettled(daemon.socket()));
  // The header touched: the same bytes, another time.
  std::filesystem::last_write_time(
      header,
      std::filesystem::last_write_time(header) + std::chrono::seconds(10));
  EXPECT_EQ(testing::RunEachCase({}, cases, dir + "/real2", ids), "");
  const auto served = ours(dir + "/ours2");
  for (const Variant& v : corpus) {
    SCOPED_TRACE(v.id);
    for (const char* run : {"1", "2"}) {
      EXPECT_EQ(FirstDifference(absl::StrCat(dir, "/real", run, "/", v.id),
                                absl::StrCat(dir, "/ours", run, "/", v.id)),
                "");
    }
    const bool same_bytes =
        WithoutRunNoise(testing::ReadFile(dir + "/real1/" + v.id)) ==
        WithoutRunNoise(testing::ReadFile(dir + "/real2/" + v.id));
    EXPECT_EQ(same_bytes, v.id == "abs-inside-w")
        << "the real NVRTC records the header's time only with -lineinfo";
    auto it = served.find(v.id);
    ASSERT_NE(it, served.end());
    const bool all_hits =
        std::all_of(it->second.begin(), it->second.end(),
                    [](const Answered& a) { return a.how == "HIT"; });
    EXPECT_EQ(all_hits, same_bytes) << daemon.Log();
  }
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

// A cache shipped from CI: `jitcache precompile --export` in one checkout,
// imported into another node's daemon, hits there for the same program
// compiled from another directory (where the real NVRTC gives the same
// bytes): through the CLI, libjitcache and libnvrtc.so.13.
TEST(CrossPlaceBundle, ABundleFromOneCheckoutHitsInAnotherDirectory) {
  testing::TempDir dir;
  auto Put = [](const std::string& path, const std::string& text) {
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    testing::WriteFile(path, text);
  };
  const std::string source =
      "#include <cub/block/block_reduce.cuh>\n"
      "extern \"C\" __global__ void total(int* x) {\n"
      "  using R = cub::BlockReduce<int, 128>;\n"
      "  __shared__ R::TempStorage t;\n"
      "  int s = R(t).Sum(x[threadIdx.x]);\n"
      "  if (threadIdx.x == 0) x[0] = s;\n}\n";
  const std::string ci = dir.Sub("ci/checkout");
  Put(ci + "/kernels/total.cu", source);
  Put(ci + "/m.manifest", "kernels/total.cu --target ptx --arch compute_90\n");
  testing::DaemonProcess builder(dir.Sub("ci.sock"), ":memory:");
  ASSERT_TRUE(builder.Start().ok()) << builder.Log();
  const std::string cli = testing::CliBinary();
  auto shell = [](const std::string& cwd, const std::string& command) {
    return testing::RunProcess(
        {"/bin/sh", "-c", "cd '" + cwd + "' && " + command});
  };
  ProcessResult made =
      shell(ci, absl::StrCat("'", cli, "-full' --socket '", builder.socket(),
                             "' precompile m.manifest --export '",
                             dir.Sub("b.jcb"), "'"));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  // CI also runs the program as a user's process does, through
  // libnvrtc.so.13 (which keys NVRTC's own include path, not jitcache's),
  // and ships that entry in a second bundle.
  const char* cuda = std::getenv("CUDA_HOME");
  Variant v;
  v.id = "total";
  v.name = "total.cu";
  v.source = source;
  v.options = {"-arch=compute_90",
               std::string("-I") +
                   (cuda != nullptr ? cuda : "/usr/local/cuda") +
                   "/include/cccl"};
  auto through_nvrtc = [&](const std::string& where, const std::string& socket,
                           const std::string& out) {
    const std::string cases = where + "/t.cases";
    testing::WriteCaseFile({v}, cases, false);
    std::filesystem::create_directories(out);
    return testing::RunProcess(
        {"/usr/bin/env", std::string("LD_LIBRARY_PATH=") + JITCACHE_NVRTC_DIR,
         "JITCACHE_SCAN_CACHE=" + dir.Sub("scans"), "JITCACHE_SOCKET=" + socket,
         "JITCACHE_NVRTC_VERBOSE=1", JITCACHE_NVRTC_CASE, cases, out});
  };
  ProcessResult in_ci = through_nvrtc(ci, builder.socket(), dir.Sub("ci-out"));
  ASSERT_EQ(in_ci.exit_code, 0) << in_ci.output;
  // The whole store's export holds final keys once every proof has ended.
  ASSERT_TRUE(testing::ProofsSettled(builder.socket()));
  ProcessResult exported =
      testing::RunProcess({cli + "-full", "--socket", builder.socket(),
                           "export", "-o", dir.Sub("all.jcb")});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;

  testing::DaemonProcess node(dir.Sub("node.sock"), dir.Sub("node.store"));
  ASSERT_TRUE(node.Start().ok()) << node.Log();
  for (const char* bundle : {"b.jcb", "all.jcb"}) {
    ProcessResult imported = testing::RunProcess(
        {cli + "-full", "--socket", node.socket(), "import", dir.Sub(bundle)});
    ASSERT_EQ(imported.exit_code, 0) << imported.output;
  }

  // The CLI, from the user's own checkout (written later: other times), as
  // CI runs it there.
  const std::string user = dir.Sub("home/user/src/project");
  Put(user + "/kernels/total.cu", source);
  ProcessResult asked =
      shell(user, absl::StrCat("'", cli, "' --socket '", node.socket(),
                               "' compile kernels/total.cu --arch compute_90 "
                               "--target ptx -o '",
                               dir.Sub("cli.ptx"), "'"));
  ASSERT_EQ(asked.exit_code, 0) << asked.output;
  EXPECT_THAT(asked.output, ::testing::StartsWith("HIT ")) << asked.output;

  // libnvrtc.so.13 from a third directory: its first answer a hit, and the
  // real NVRTC's bytes there.
  const std::string third = dir.Sub("scratch/run7");
  std::filesystem::create_directories(third);
  ProcessResult ours = through_nvrtc(third, node.socket(), dir.Sub("ours"));
  ASSERT_EQ(ours.exit_code, 0) << ours.output;
  ASSERT_EQ(
      testing::RunEachCase({}, third + "/t.cases", dir.Sub("real"), {"total"}),
      "");
  EXPECT_THAT(ours.output, ::testing::StartsWith("jitcache-nvrtc: total.cu: "
                                                 "HIT ptx key"))
      << ours.output;
  EXPECT_THAT(ours.output, ::testing::Not(::testing::HasSubstr("MISS")));
  EXPECT_EQ(FirstDifference(dir.Sub("real/total"), dir.Sub("ours/total")), "");

  // libjitcache, from a fourth.
  const std::string fourth = dir.Sub("var/jobs/42");
  std::filesystem::create_directories(fourth);
  ASSERT_EQ(chdir(fourth.c_str()), 0);
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = node.socket()});
  ASSERT_TRUE(client.ok()) << client.status();
  ProgramOptions options;
  options.arch = "compute_90";
  absl::StatusOr<ObjectCode> code =
      client->Compile(Program(source, "total.cu"), options, CodeType::kPtx);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(code->served, Served::kHit)
      << code->cache_key << " against the CLI's: " << asked.output;
  EXPECT_EQ(testing::ReadFile(dir.Sub("cli.ptx")), code->bytes);
  // And those bytes are the real NVRTC's in the user's place, given the
  // toolkit's include directories as jitcache's own front ends add them
  // (apart from what NVRTC varies per process).
  Variant as_cli = v;
  as_cli.id = "cli";
  as_cli.options = {"-arch=compute_90"};
  const std::string toolkit = cuda != nullptr ? cuda : "/usr/local/cuda";
  for (const char* include : {"/include", "/include/cccl"}) {
    as_cli.options.push_back(
        "-I" + std::filesystem::canonical(toolkit + include).string());
  }
  testing::WriteCaseFile({as_cli}, user + "/cli.cases", false);
  ASSERT_EQ(
      testing::RunEachCase({}, user + "/cli.cases", dir.Sub("real"), {"cli"}),
      "");
  EXPECT_EQ(WithoutRunNoise(PtxOf(testing::ReadFile(dir.Sub("real/cli")))),
            WithoutRunNoise(std::string(code->bytes.str().c_str())));
  // The CLI's, the library's and the NVRTC library's PTX: hits. (The NVRTC
  // library also asks for the LTO-IR the real NVRTC has none of for these
  // options: that one compiles, to find out.)
  EXPECT_GE(testing::StatsOf(node.socket()).hits, 3u);
}

}  // namespace
}  // namespace jitcache
