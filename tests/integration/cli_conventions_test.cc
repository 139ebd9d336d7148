// The programs' conventions (issue 35, item 7, in part): --version and
// --help answer on standard output with exit status 0.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "jitcache/v1/jitcache.pb.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

using testing::ProcessResult;

TEST(CliConventions, VersionsAreTheProjectsAndExitZero) {
  ProcessResult cli = testing::RunProcess({JITCACHE_CLI, "--version"});
  EXPECT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_EQ(cli.output, "jitcache " JITCACHE_VERSION "\n");
  ProcessResult daemon = testing::RunProcess({JITCACHE_DAEMON, "--version"});
  EXPECT_EQ(daemon.exit_code, 0) << daemon.output;
  EXPECT_TRUE(absl::StartsWith(daemon.output, "jitcached " JITCACHE_VERSION))
      << daemon.output;
}

TEST(CliConventions, HelpIsOnStandardOutputAndExitsZero) {
  for (const char* flag : {"--help", "-h", "--helpshort"}) {
    ProcessResult daemon = testing::RunProcess({JITCACHE_DAEMON, flag});
    EXPECT_EQ(daemon.exit_code, 0) << flag << ": " << daemon.output;
    // This program's flags, with what they are for.
    EXPECT_TRUE(absl::StrContains(daemon.output, "--socket")) << daemon.output;
    EXPECT_TRUE(absl::StrContains(daemon.output, "--libnvvm")) << daemon.output;
    EXPECT_TRUE(absl::StrContains(daemon.output, "Usage: jitcached"))
        << daemon.output;
    EXPECT_TRUE(absl::StartsWith(daemon.output, "jitcached: "))
        << daemon.output;
  }
  ProcessResult full = testing::RunProcess({JITCACHE_DAEMON, "--helpfull"});
  EXPECT_EQ(full.exit_code, 0) << full.output;
  EXPECT_GT(full.output.size(), 1000u);
  for (const char* flag : {"--help", "-h"}) {
    ProcessResult cli = testing::RunProcess({JITCACHE_CLI, flag});
    EXPECT_EQ(cli.exit_code, 0) << cli.output;
    EXPECT_TRUE(absl::StrContains(cli.output, "--version")) << cli.output;
  }
  // An unknown flag is still a usage error.
  ProcessResult wrong = testing::RunProcess({JITCACHE_DAEMON, "--no-such"});
  EXPECT_NE(wrong.exit_code, 0) << wrong.output;
}

// `stats --json` is JSON, and holds every number StatsResponse has, under
// its name, and the users.
// jitcache-full's parser (CLI11): each command takes its own options only,
// values are checked, an option given twice takes its last value, and
// compile's and link's arguments (`--` too) are theirs.
TEST(CliConventions, EachCommandTakesItsOwnOptionsOnly) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  const std::string socket = daemon.socket();
  const std::string gone = dir.Sub("gone.sock");
  struct Case {
    std::vector<std::string> args;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {{"--socket", socket, "stats", "--bogus"}, 2},
      {{"--socket", socket, "stats", "--zero", "--json", "--ptx"}, 2},
      {{"--socket", socket, "ls", "--limit", "many"}, 2},
      {{"--socket", socket, "ls", "--limit=-1"}, 2},
      {{"--socket", socket, "ls", "--kind="}, 2},
      {{"--socket", socket, "ls", "--sort", "age"}, 2},
      {{"--socket", socket, "show"}, 2},
      {{"--socket", socket, "frobnicate"}, 2},
      {{"--bogus", "--socket", socket, "ping"}, 2},
      {{"--socket", socket, "ls", "--limit", "3", "--kind", "cubin"}, 0},
      // The last of two values counts.
      {{"--socket", gone, "--socket", socket, "ping"}, 0},
      {{"--socket", socket, "--socket", gone, "ping"}, 3},
      // `--` and what follows are compile's: the socket stays the first.
      {{"--socket", gone, "compile", "k.cu", "--", "--socket", socket}, 3},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {JITCACHE_CLI_FULL};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    ProcessResult run = testing::RunProcess(argv);
    EXPECT_EQ(run.exit_code, c.exit_code)
        << absl::StrJoin(c.args, " ") << ": " << run.output;
  }
}

TEST(CliConventions, StatsAsJsonHoldEveryFieldOfTheProto) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  ProcessResult out = testing::RunProcess(
      {JITCACHE_CLI, "--socket", daemon.socket(), "stats", "--json"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  google::protobuf::Struct parsed;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(out.output, &parsed).ok())
      << out.output;
  const google::protobuf::Descriptor* stats = v1::StatsResponse::descriptor();
  int numbers = 0;
  for (int i = 0; i < stats->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = stats->field(i);
    if (f->is_repeated() ||
        f->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
      continue;
    }
    ++numbers;
    auto it = parsed.fields().find(f->name());
    ASSERT_TRUE(it != parsed.fields().end()) << f->name() << " missing";
    EXPECT_EQ(it->second.kind_case(), google::protobuf::Value::kNumberValue)
        << f->name();
  }
  EXPECT_GT(numbers, 40);
  auto users = parsed.fields().find("users");
  ASSERT_TRUE(users != parsed.fields().end());
  EXPECT_EQ(users->second.kind_case(), google::protobuf::Value::kListValue);
  // Not JSON without the flag.
  ProcessResult text =
      testing::RunProcess({JITCACHE_CLI, "--socket", daemon.socket(), "stats"});
  EXPECT_FALSE(absl::StartsWith(text.output, "{")) << text.output;
}

// `jitcache ARGS... --json` over `socket`, parsed as the message `M`
// (protobuf's own JSON parser: every field name must be the message's).
template <typename M>
M JsonAnswer(const std::string& socket, std::vector<std::string> args) {
  std::vector<std::string> argv = {JITCACHE_CLI, "--socket", socket};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  ProcessResult out = testing::RunProcess(argv);
  EXPECT_EQ(out.exit_code, 0) << out.output;
  M parsed;
  EXPECT_TRUE(
      google::protobuf::util::JsonStringToMessage(out.output, &parsed).ok())
      << out.output;
  return parsed;
}

// ping, config, ls and show --json are their messages' JSON.
TEST(CliConventions, PingConfigLsAndShowAsJsonAreTheirMessages) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = daemon.socket()});
  ASSERT_TRUE(client.ok());
  ProgramOptions options;
  options.arch = "compute_90";
  options.wait_for_proof = true;
  absl::StatusOr<ObjectCode> code =
      client->Compile(Program("extern \"C\" __global__ void k() {}\n", "k.cu"),
                      options, CodeType::kPtx);
  ASSERT_TRUE(code.ok()) << code.status();

  const auto ping = JsonAnswer<v1::PingResponse>(daemon.socket(), {"ping"});
  EXPECT_FALSE(ping.daemon_version().empty());
  EXPECT_FALSE(ping.toolchain_fingerprint().empty());
  const auto config =
      JsonAnswer<v1::ConfigResponse>(daemon.socket(), {"config"});
  EXPECT_GT(config.settings_size(), 5);
  const auto listed =
      JsonAnswer<v1::ListEntriesResponse>(daemon.socket(), {"ls"});
  ASSERT_GE(listed.entries_size(), 1);
  const std::string key = listed.entries(0).key();
  ASSERT_FALSE(key.empty());
  const auto shown = JsonAnswer<v1::ShowEntryResponse>(
      daemon.socket(), {"show", key.substr(0, 16)});
  EXPECT_EQ(shown.entry().key(), key);
  // A command without a JSON form says so.
  ProcessResult health = testing::RunProcess(
      {JITCACHE_CLI, "--socket", daemon.socket(), "health", "--json"});
  EXPECT_EQ(health.exit_code, 2) << health.output;
}

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every JITCACHE_ variable the sources name is in the README's table, and
// each program's --help has an Environment part; `jitcache COMMAND --help`
// is that command's part of the usage.
TEST(CliConventions, EveryEnvironmentVariableIsDocumented) {
  const std::filesystem::path root = JITCACHE_SOURCE_DIR;
  const std::string readme = Read(root / "README.md");
  const size_t table = readme.find("## Environment");
  ASSERT_NE(table, std::string::npos);
  const std::string environment =
      readme.substr(table, readme.find("\n## ", table + 1) - table);
  std::set<std::string> names;
  const std::regex name("\"(JITCACHE_[A-Z_]+)\"");
  for (const char* dir : {"client", "common", "server"}) {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      const std::string text = Read(entry.path());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), name);
           it != std::sregex_iterator(); ++it) {
        names.insert((*it)[1].str());
      }
    }
  }
  EXPECT_GT(names.size(), 15u);
  for (const std::string& n : names) {
    EXPECT_TRUE(absl::StrContains(environment, "`" + n + "`"))
        << n << " is not in the README's environment table";
  }
  ProcessResult cli = testing::RunProcess({JITCACHE_CLI, "--help"});
  EXPECT_TRUE(absl::StrContains(cli.output, "Environment:\n  JITCACHE_SOCKET"))
      << cli.output;
  ProcessResult daemon = testing::RunProcess({JITCACHE_DAEMON, "--help"});
  EXPECT_TRUE(absl::StrContains(daemon.output, "JITCACHE_STORE"))
      << daemon.output;
  ProcessResult stats = testing::RunProcess({JITCACHE_CLI, "stats", "--help"});
  EXPECT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_TRUE(absl::StrContains(stats.output, "stats [--zero] [--json]"))
      << stats.output;
  EXPECT_FALSE(absl::StrContains(stats.output, "precompile")) << stats.output;
  ProcessResult unknown =
      testing::RunProcess({JITCACHE_CLI, "no-such-command", "--help"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
}

}  // namespace
}  // namespace jitcache
