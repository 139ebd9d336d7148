// The real NVRTC is the oracle. Every variant of the corpus (option
// spellings, files a program may read, working directories, program names)
// is compiled by the real NVRTC, each in a fresh process, and through
// jitcache's libnvrtc.so.13 against one long-lived daemon: in corpus order,
// in reverse order against a second daemon, and again after a restart
// (from the store). Every observable must match: result codes, logs, PTX,
// cubin, LTO-IR and lowered names (apart from the process id NVRTC writes
// into _INTERNAL_ names). A false hit (another variant's entry served) or a
// wrong compile (the daemon's compile seeing other options, files or
// directories than the caller's NVRTC) shows as a difference.
#include <nvrtc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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

using testing::ProcessResult;

using testing::FirstDifference;
using testing::StatsOf;

class NvrtcDifferential : public ::testing::Test {
 protected:
  void SetUp() override {
    corpus_ = testing::BuildCorpus(root_.path());
    ASSERT_FALSE(corpus_.empty());
    forward_ = root_.Sub("forward.cases");
    reverse_ = root_.Sub("reverse.cases");
    testing::WriteCaseFile(corpus_, forward_, false);
    testing::WriteCaseFile(corpus_, reverse_, true);
  }

  std::vector<std::string> Env(const std::string& socket) const {
    return {"/usr/bin/env",
            std::string("LD_LIBRARY_PATH=") + JITCACHE_NVRTC_DIR,
            "JITCACHE_SCAN_CACHE=" + root_.Sub("scans"),
            "JITCACHE_SOCKET=" + socket};
  }

  // The real NVRTC, one fresh process per case, two at a time.
  void RunOracle(const std::string& out) {
    std::vector<std::string> ids;
    for (const testing::Variant& v : corpus_) ids.push_back(v.id);
    RunEach({}, forward_, out, ids);
  }

  static void RunEach(const std::vector<std::string>& env,
                      const std::string& cases, const std::string& out,
                      const std::vector<std::string>& ids) {
    ASSERT_EQ(testing::RunEachCase(env, cases, out, ids), "");
  }

  // Every case through our library in one process, in the file's order.
  void RunOurs(const std::string& socket, const std::string& cases,
               const std::string& out) {
    std::filesystem::create_directories(out);
    std::vector<std::string> argv = Env(socket);
    argv.insert(argv.end(), {JITCACHE_NVRTC_CASE, cases, out});
    ProcessResult r = testing::RunProcess(argv, absl::Minutes(10));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  // The cases whose results differ from the oracle's, with the first
  // difference of each.
  // `later_pass`: ours ran the corpus before in the same process, where
  // the oracle did not; variants whose real result depends on that (NVRTC
  // keeps automatic precompiled headers between one process's compiles:
  // "creating" the first time, "using" after) are left out.
  std::vector<std::string> Differences(const std::string& oracle,
                                       const std::string& ours,
                                       bool later_pass = false) {
    std::vector<std::string> bad;
    for (const testing::Variant& v : corpus_) {
      if (later_pass && std::find(v.options.begin(), v.options.end(), "-pch") !=
                            v.options.end()) {
        continue;
      }
      const std::string difference =
          FirstDifference(oracle + "/" + v.id, ours + "/" + v.id);
      if (!difference.empty()) {
        bad.push_back(
            absl::StrCat(v.id, " (", v.Describe(), "): ", difference));
      }
    }
    return bad;
  }

  testing::TempDir root_;
  std::vector<testing::Variant> corpus_;
  std::string forward_, reverse_;
};

TEST_F(NvrtcDifferential,
       EveryVariantMatchesTheRealNvrtcInBothOrdersAndAfterARestart) {
  RunOracle(root_.Sub("real"));

  const std::string store = root_.Sub("store");
  testing::DaemonProcess daemon(root_.Sub("a.sock"), store, {"--workers=2"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  RunOurs(daemon.socket(), forward_, root_.Sub("forward"));
  std::vector<std::string> bad =
      Differences(root_.Sub("real"), root_.Sub("forward"));
  EXPECT_TRUE(bad.empty()) << bad.size() << " of " << corpus_.size()
                           << " variants differ (corpus order):\n"
                           << absl::StrJoin(bad, "\n");

  {
    testing::DaemonProcess other(root_.Sub("b.sock"),
                                 ":memory:", {"--workers=2"});
    ASSERT_TRUE(other.Start().ok()) << other.Log();
    RunOurs(other.socket(), reverse_, root_.Sub("reverse"));
    bad = Differences(root_.Sub("real"), root_.Sub("reverse"));
    EXPECT_TRUE(bad.empty()) << bad.size() << " of " << corpus_.size()
                             << " variants differ (reverse order):\n"
                             << absl::StrJoin(bad, "\n");
  }

  ASSERT_EQ(daemon.Stop(), 0);
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  RunOurs(daemon.socket(), forward_, root_.Sub("again"));
  bad = Differences(root_.Sub("real"), root_.Sub("again"));
  EXPECT_TRUE(bad.empty()) << bad.size() << " of " << corpus_.size()
                           << " variants differ (after a restart):\n"
                           << absl::StrJoin(bad, "\n");
  // The restarted daemon answered most from its store (not all: what it
  // cannot key goes to the real NVRTC, and errors are not cached).
  EXPECT_GT(StatsOf(daemon.socket()).hits, corpus_.size() / 2);

  // Every file the corpus reads changes: the same daemon, holding entries
  // for the old contents, must give what the real NVRTC gives now.
  ASSERT_EQ(testing::BuildCorpus(root_.path(), 1).size(), corpus_.size());
  RunOracle(root_.Sub("real-changed"));
  RunOurs(daemon.socket(), forward_, root_.Sub("changed"));
  bad = Differences(root_.Sub("real-changed"), root_.Sub("changed"));
  EXPECT_TRUE(bad.empty()) << bad.size() << " of " << corpus_.size()
                           << " variants differ (files changed):\n"
                           << absl::StrJoin(bad, "\n");
  // The two generations differ where a file was read (so the corpus does
  // test what it reads).
  int changed = 0;
  for (const testing::Variant& v : corpus_) {
    changed += testing::ReadFile(root_.Sub("real/" + v.id)) !=
               testing::ReadFile(root_.Sub("real-changed/" + v.id));
  }
  EXPECT_GE(changed, 25);
}

// One process of ours, watching directories from its first stamp check
// (JITCACHE_SCAN_WATCH_AFTER=0): the corpus twice (the second pass answers
// its scans from memory, checked once and then watched), then, after every
// file the corpus reads has changed while the process waits, a third
// time. The third pass must give what the real NVRTC gives on the changed
// files: a change the watch missed would serve the old entries.
TEST_F(NvrtcDifferential, ChangesUnderWatchedDirectoriesAreSeenInOneProcess) {
  RunOracle(root_.Sub("real"));
  testing::DaemonProcess daemon(root_.Sub("w.sock"), root_.Sub("w.store"),
                                {"--workers=2"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();

  const std::string go = root_.Sub("go");
  const std::string cases = testing::ReadFile(forward_);
  const std::string passes = root_.Sub("passes.cases");
  for (const char* pass : {"first", "second", "changed"}) {
    std::filesystem::create_directories(root_.Sub(pass));
  }
  testing::WriteFile(
      passes,
      absl::StrCat("outdir ", root_.Sub("first"), "\n", cases, "outdir ",
                   root_.Sub("second"), "\n", cases, "pause ", go, "\noutdir ",
                   root_.Sub("changed"), "\n", cases));
  std::vector<std::string> argv = Env(daemon.socket());
  argv.push_back("JITCACHE_SCAN_WATCH_AFTER=0");
  argv.insert(argv.end(), {JITCACHE_NVRTC_CASE, passes, root_.Sub("first")});
  std::future<ProcessResult> ours = std::async(std::launch::async, [&] {
    return testing::RunProcess(argv, absl::Minutes(10));
  });
  while (!std::filesystem::exists(go + ".ready") &&
         ours.wait_for(std::chrono::milliseconds(50)) !=
             std::future_status::ready) {
  }
  ASSERT_TRUE(std::filesystem::exists(go + ".ready"))
      << "ours ended before the pause: " << ours.get().output;
  ASSERT_EQ(testing::BuildCorpus(root_.path(), 1).size(), corpus_.size());
  RunOracle(root_.Sub("real-changed"));
  testing::WriteFile(go, "");
  const ProcessResult done = ours.get();
  ASSERT_EQ(done.exit_code, 0) << done.output;

  for (const auto& [oracle, pass] :
       {std::pair<const char*, const char*>{"real", "first"},
        {"real", "second"},
        {"real-changed", "changed"}}) {
    const std::vector<std::string> bad = Differences(
        root_.Sub(oracle), root_.Sub(pass), std::string(pass) != "first");
    EXPECT_TRUE(bad.empty()) << bad.size() << " of " << corpus_.size()
                             << " variants differ (" << pass << " pass):\n"
                             << absl::StrJoin(bad, "\n");
  }
  // The second pass hit: its scans were answered from memory.
  EXPECT_GT(StatsOf(daemon.socket()).hits, corpus_.size() / 2);
}

// Option names as the real NVRTC library spells them in its own binary:
// every printable run that looks like an option ("-x", "--x-y", "--x=").
std::vector<std::string> OptionNamesInTheRealNvrtc() {
  const std::string binary = testing::ReadFile(JITCACHE_REAL_NVRTC_LIBRARY);
  static const std::regex kOption("--?[a-zA-Z][a-zA-Z0-9_-]*=?");
  std::set<std::string> names;
  std::string run;
  for (char c : binary) {
    if (c >= 0x20 && c < 0x7f) {
      run.push_back(c);
      continue;
    }
    if (run.size() >= 2 && std::regex_match(run, kOption)) names.insert(run);
    run.clear();
  }
  return {names.begin(), names.end()};
}

// Every option the real NVRTC accepts, found by asking it (each name its
// binary holds, tried alone on a small kernel), through our library and
// through the real one, each in a fresh process, against one daemon: the
// same result code, log, objects and lowered names. Names it refuses are
// sampled too (they must reach the same refusal).
TEST_F(NvrtcDifferential, EveryOptionTheRealNvrtcAcceptsMatches) {
  const std::vector<std::string> names = OptionNamesInTheRealNvrtc();
  ASSERT_GT(names.size(), 200u) << JITCACHE_REAL_NVRTC_LIBRARY;
  std::vector<testing::Variant> probes;
  for (size_t i = 0; i < names.size(); ++i) {
    testing::Variant v;
    v.id = absl::StrCat("probe-", i);
    v.name = "probe.cu";
    v.source =
        "template <int N> __global__ void p(float* a, float* b) {\n"
        "  for (int i = 0; i < N; ++i) a[i] += b[i] * b[i + 1];\n"
        "}\n";
    v.options = {"-arch=sm_90", names[i]};
    v.exprs = {"p<4>"};
    probes.push_back(std::move(v));
  }
  const std::string cases = root_.Sub("probes.cases");
  testing::WriteCaseFile(probes, cases, false);
  std::vector<std::string> all;
  for (const testing::Variant& v : probes) all.push_back(v.id);
  RunEach({}, cases, root_.Sub("probe-real"), all);

  // Accepted: the real NVRTC did not answer NVRTC_ERROR_INVALID_OPTION.
  std::vector<std::string> compared, accepted;
  size_t refused = 0;
  for (const testing::Variant& v : probes) {
    const std::string real = testing::ReadFile(root_.Sub("probe-real/" + v.id));
    ASSERT_TRUE(absl::StartsWith(real, "create 0\n")) << v.id << ": " << real;
    const bool accepts = !absl::StrContains(
        real, absl::StrCat("compile ", NVRTC_ERROR_INVALID_OPTION, "\n"));
    if (accepts) {
      accepted.push_back(v.options[1]);
      compared.push_back(v.id);
    } else if (refused++ % 20 == 0) {
      compared.push_back(v.id);
    }
  }
  std::cout << names.size() << " option names in the real NVRTC, "
            << accepted.size()
            << " accepted alone: " << absl::StrJoin(accepted, " ") << "\n";
  EXPECT_GT(accepted.size(), 30u);

  testing::DaemonProcess daemon(root_.Sub("p.sock"),
                                ":memory:", {"--workers=2"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  RunEach(Env(daemon.socket()), cases, root_.Sub("probe-ours"), compared);
  std::vector<std::string> bad;
  for (const std::string& id : compared) {
    const std::string difference = FirstDifference(
        root_.Sub("probe-real/" + id), root_.Sub("probe-ours/" + id));
    if (!difference.empty()) {
      bad.push_back(
          absl::StrCat(names[std::stoul(id.substr(6))], ": ", difference));
    }
  }
  EXPECT_TRUE(bad.empty()) << bad.size() << " of " << compared.size()
                           << " options differ:\n"
                           << absl::StrJoin(bad, "\n");
  // The daemon compiled the accepted ones (what it refused, the caller's
  // NVRTC did, and the comparison above holds either way).
  const uint64_t misses = StatsOf(daemon.socket()).misses;
  std::cout << "the daemon answered " << misses << " misses for "
            << compared.size() << " options\n";
  EXPECT_GT(misses, accepted.size() / 2);
}

// Options that only tune precompiled headers, alone (no PCH made or used):
// compiled by the daemon and a hit in a second process, with the real
// NVRTC's answers (the PCH queries' included) in both.
TEST_F(NvrtcDifferential, PchTuningAloneIsCachedAndExact) {
  std::vector<testing::Variant> tuning;
  for (const testing::Variant& v : corpus_) {
    // The ones NVRTC takes ("--pch-verbose" without a value, "=maybe" are
    // refused by it, and compared by the corpus).
    if (absl::StartsWith(v.id, "pch-modifier-") &&
        std::none_of(
            v.options.begin(), v.options.end(), [](const std::string& o) {
              return o == "--pch-verbose" || absl::EndsWith(o, "=maybe");
            })) {
      tuning.push_back(v);
    }
  }
  ASSERT_GE(tuning.size(), 6u);
  const std::string cases = root_.Sub("tuning.cases");
  testing::WriteCaseFile(tuning, cases, false);
  std::vector<std::string> ids;
  for (const testing::Variant& v : tuning) ids.push_back(v.id);
  RunEach({}, cases, root_.Sub("tuning-real"), ids);

  testing::DaemonProcess daemon(root_.Sub("t.sock"),
                                ":memory:", {"--workers=2"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  std::map<std::string, std::string> served;  // case id: how, run 2
  for (const char* run : {"tuning-1", "tuning-2"}) {
    std::filesystem::create_directories(root_.Sub(run));
    std::vector<std::string> argv = Env(daemon.socket());
    argv.insert(argv.end(),
                {"JITCACHE_NVRTC_VERBOSE=1", "JITCACHE_CASE_TRACE=1",
                 JITCACHE_NVRTC_CASE, cases, root_.Sub(run)});
    const ProcessResult r = testing::RunProcess(argv, absl::Minutes(5));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const std::string& id : ids) {
      EXPECT_EQ(FirstDifference(root_.Sub("tuning-real/" + id),
                                root_.Sub(std::string(run) + "/" + id)),
                "")
          << run << " " << id;
    }
    served.clear();
    std::string current;
    for (absl::string_view line : absl::StrSplit(r.output, '\n')) {
      if (absl::ConsumePrefix(&line, "jitcache-case: ")) {
        current = std::string(line);
      } else if (absl::StartsWith(line, "jitcache-nvrtc: ")) {
        absl::StrAppend(&served[current], line, "\n");
      }
    }
  }
  // Run 2: every one a hit, none handed to the real NVRTC.
  for (const std::string& id : ids) {
    EXPECT_TRUE(absl::StrContains(served[id], ": HIT ")) << id << ":\n"
                                                         << served[id];
    EXPECT_FALSE(absl::StrContains(served[id], "the real NVRTC does"))
        << id << ":\n"
        << served[id];
  }
  const DaemonStats stats = StatsOf(daemon.socket());
  EXPECT_EQ(stats.hits, stats.misses);
}

}  // namespace
}  // namespace jitcache
