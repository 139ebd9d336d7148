#ifndef JITCACHE_TESTS_TESTING_PTXAS_PROCESS_H_
#define JITCACHE_TESTS_TESTING_PTXAS_PROCESS_H_

#include <sys/stat.h>

#include <atomic>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache::testing {

// Everything a ptxas run leaves behind that its caller can see.
struct PtxasOutcome {
  int exit_code = -1;
  std::string out, err;
  std::optional<std::string> output;  // the output file; nullopt: none
  mode_t mode = 0;                    // the output file's permissions
  bool operator==(const PtxasOutcome&) const = default;
};

// ptxas -v reports how long each function took: two real runs differ
// there and nowhere else.
inline std::string WithoutTimes(const std::string& log) {
  static const std::regex time("Compile time = [0-9.]+ ms");
  return std::regex_replace(log, time, "Compile time = T ms");
}

inline std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs `program` `arguments` in `dir` with `env` ("NAME=VALUE") added, and
// collects stdout, stderr, the exit code and the output file `output`
// (relative to `dir`).
inline PtxasOutcome RunPtxasIn(const std::string& dir,
                               const std::string& program,
                               const std::vector<std::string>& arguments,
                               const std::string& output,
                               const std::vector<std::string>& env = {}) {
  static std::atomic<int> runs{0};
  const int run = runs++;
  const std::string out = absl::StrCat(dir, "/.stdout", run);
  const std::string err = absl::StrCat(dir, "/.stderr", run);
  std::string command = absl::StrCat("cd ", Quoted(dir), " && exec env");
  for (const std::string& e : env) absl::StrAppend(&command, " ", Quoted(e));
  absl::StrAppend(&command, " ", Quoted(program));
  for (const std::string& a : arguments) {
    absl::StrAppend(&command, " ", Quoted(a));
  }
  absl::StrAppend(&command, " >", Quoted(out), " 2>", Quoted(err));
  PtxasOutcome outcome;
  outcome.exit_code = RunProcess({"/bin/sh", "-c", command}).exit_code;
  outcome.out = ReadFile(out);
  outcome.err = WithoutTimes(ReadFile(err));
  unlink(out.c_str());
  unlink(err.c_str());
  const std::string path =
      output.starts_with("/") ? output : dir + "/" + output;
  struct stat st;
  if (!output.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    outcome.output = ReadFile(path);
    outcome.mode = st.st_mode & 07777;
  }
  return outcome;
}

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_PTXAS_PROCESS_H_
