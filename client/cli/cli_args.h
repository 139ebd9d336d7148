#ifndef JITCACHE_CLIENT_CLI_CLI_ARGS_H_
#define JITCACHE_CLIENT_CLI_CLI_ARGS_H_

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/cli/compile_flags.h"
#include "common/fd_io.h"

namespace jitcache::cli {

// Exit status of every jitcache command.
inline constexpr int kExitCompileError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFailure = 3;

// Every failed request is reported the same way: "jitcache: CODE: what".
inline int Failed(const absl::Status& s) {
  std::cerr << "jitcache: " << absl::StatusCodeToString(s.code()) << ": "
            << s.message() << "\n";
  return kExitFailure;
}

inline int UsageError(absl::string_view message) {
  std::cerr << "jitcache: " << message << "\n(see jitcache --help)\n";
  return kExitUsage;
}

// Writes an object to `path` (common/fd_io.h: WriteOutputFile); false
// (having said why on stderr) when it cannot.
inline bool WriteOutput(const std::string& path, std::string_view bytes) {
  if (WriteOutputFile(path.c_str(), bytes.data(), bytes.size())) return true;
  std::cerr << "jitcache: cannot write " << path << "\n";
  return false;
}

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_CLI_ARGS_H_
