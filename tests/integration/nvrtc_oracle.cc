#include "tests/integration/nvrtc_oracle.h"

#include <algorithm>
#include <filesystem>
#include <future>
#include <regex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/test_env.h"

namespace jitcache::testing {

std::string WithoutRunNoise(std::string text) {
  static const auto* kVarying =
      new std::vector<std::pair<std::regex, std::string>>{
          // "_INTERNAL_<hex>_<n>_<file>_<hex>_<number>": the hex digits and
          // the number vary from one process to the next.
          {std::regex("(_INTERNAL_|_GLOBAL__N__)[0-9a-f]{8}(_[0-9]+_\\w+?_)"
                      "[0-9a-f]{8}_[0-9]+"),
           "$1xxxxxxxx$2xxxxxxxx_x"},
          {std::regex("_INTERNAL_[0-9a-f]{8}"), "_INTERNAL_xxxxxxxx"},
          // A number of another length changes the mangled name's length.
          {std::regex("[0-9]+(_INTERNAL_|_GLOBAL__N__)"), "n$1"},
          {std::regex("__nvrtc_auto_pch_[0-9]+_"), "__nvrtc_auto_pch_x_"},
          {std::regex("Compile time = [0-9.]+ ms"), "Compile time = x ms"},
          {std::regex(", [0-9.]+, ms\n"), ", x, ms\n"},
          {std::regex("\nlog 0 [0-9]+\n"), "\nlog 0 x\n"},
          // Those numbers change the length of PTX too (its bytes, which
          // follow, are compared).
          {std::regex("\nptx 0 [0-9]+\n"), "\nptx 0 x\n"}};
  for (const auto& [pattern, replacement] : *kVarying) {
    text = std::regex_replace(text, pattern, replacement);
  }
  return text;
}

std::string FirstDifference(const std::string& real_path,
                            const std::string& ours_path) {
  const std::string want = WithoutRunNoise(ReadFile(real_path));
  const std::string got = WithoutRunNoise(ReadFile(ours_path));
  if (want.empty()) return "the oracle wrote nothing";
  if (want == got) return "";
  const auto [w, g] =
      std::mismatch(want.begin(), want.end(), got.begin(), got.end());
  const size_t at = w - want.begin();
  const size_t from = at < 80 ? 0 : at - 80;
  return absl::StrCat("differs at byte ", at, "\n    real: ...",
                      want.substr(from, 200), "\n    ours: ...",
                      got.substr(from, 200));
}

std::string RunEachCase(const std::vector<std::string>& env,
                        const std::string& cases, const std::string& out,
                        const std::vector<std::string>& ids) {
  std::filesystem::create_directories(out);
  constexpr size_t kParallel = 2;
  std::vector<std::future<std::string>> runs;
  for (size_t lane = 0; lane < kParallel; ++lane) {
    runs.push_back(std::async(std::launch::async, [&, lane] {
      std::string failures;
      for (size_t i = lane; i < ids.size(); i += kParallel) {
        std::vector<std::string> argv = env;
        argv.insert(argv.end(), {JITCACHE_NVRTC_CASE, cases, out, ids[i]});
        ProcessResult r = RunProcess(argv);
        if (r.exit_code != 0) {
          absl::StrAppend(&failures, ids[i], ": ", r.output, "\n");
        }
      }
      return failures;
    }));
  }
  std::string failures;
  for (auto& run : runs) failures += run.get();
  return failures;
}

}  // namespace jitcache::testing
