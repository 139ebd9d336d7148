#ifndef JITCACHE_TESTS_TESTING_TEAM_NODES_H_
#define JITCACHE_TESTS_TESTING_TEAM_NODES_H_

#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache::testing {

// The key a compile's first output line names ("MISS key HEX ...").
inline std::string KeyOfLine(const std::string& line) {
  const size_t at = line.find("key ");
  return at == std::string::npos ? "" : line.substr(at + 4, 64);
}

// Daemons of one team, each with its own socket and store under `dir`,
// sharing the team tier at `url` and signing with one key file.
// Not thread-safe.
class TeamNodes {
 public:
  static constexpr char kTeamKey[] =
      "8f1c2e4a6b7d9e0f11223344556677889900aabbccddeeff0123456789abcdef";

  TeamNodes(const TempDir& dir, std::string url)
      : dir_(dir), url_(std::move(url)) {
    key_file_ = KeyFile("team.keys", {kTeamKey});
  }

  // A key file of `keys` (hex), private to this user.
  std::string KeyFile(const std::string& name,
                      const std::vector<std::string>& keys) const {
    const std::string path = dir_.Sub(name);
    WriteFile(path, "# team keys\n" + absl::StrJoin(keys, "\n"));
    chmod(path.c_str(), 0600);
    return path;
  }

  // A node of the team, started; `flags` add to (or, for --remote, come
  // before) the team's.
  DaemonProcess& Node(const std::string& name,
                      std::vector<std::string> flags = {}) {
    flags.push_back("--remote=" + url_);
    flags.push_back("--remote_key_file=" + key_file_);
    nodes_.push_back(std::make_unique<DaemonProcess>(
        dir_.Sub(name + ".sock"), dir_.Sub(name + ".store"), flags));
    EXPECT_TRUE(nodes_.back()->Start().ok()) << nodes_.back()->Log();
    return *nodes_.back();
  }

  // `jitcache compile` of `source` on `node` to `out`.cubin: its first
  // output line ("MISS key ...", "MISS (remote) key ...", "HIT key ...").
  // The program is always named kernel.cu (the name is part of the key);
  // the key is final, not a place's while its proof runs.
  std::string Compile(const DaemonProcess& node, const std::string& source,
                      const std::string& out) const {
    std::filesystem::create_directories(dir_.Sub(out));
    const std::string path = dir_.Sub(out + "/kernel.cu");
    WriteFile(path, source);
    ProcessResult r = RunProcess(
        {"/usr/bin/env", "JITCACHE_NO_FALLBACK=1", CliBinary(), "--socket",
         node.socket(), "compile", path, "--arch", "sm_90", "--target", "cubin",
         "-o", dir_.Sub(out + ".cubin"), "--wait-for-proof"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output.substr(0, r.output.find('\n'));
  }

  const std::string& key_file() const { return key_file_; }

 private:
  const TempDir& dir_;
  const std::string url_;
  std::string key_file_;
  std::vector<std::unique_ptr<DaemonProcess>> nodes_;
};

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_TEAM_NODES_H_
