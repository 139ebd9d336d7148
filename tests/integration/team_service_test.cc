// The daemon as a team's service: socket activation and restarts, the
// service manager's notifications, access by group, fairness per uid,
// metrics, health and logs. Real daemons, real NVRTC, real sockets; the
// other users are uids this (root) test switches to.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/cache_key.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "jitcache/v1/stat_options.pb.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kernels.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::CliBinary;
using testing::DaemonBinary;
using testing::ProcessResult;
using testing::RunAs;

// nobody:nogroup is a member; 4242 is one through a supplementary group;
// 4343 is not one.
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;
const RunAs kMember{kNobody, kNogroup, {}};
const RunAs kSupplementaryMember{4242, 4242, {kNogroup}};
const RunAs kOutsider{4343, 4343, {}};

ProgramOptions Sm90() {
  ProgramOptions options;
  options.arch = "sm_90";
  return options;
}

std::string Kernel(int n, int unroll = 1) {
  return kernels::UnrolledKernel(n, unroll);
}

// A directory others can traverse (mkdtemp makes it 0700), with an out/
// that everyone may write objects to.
class OpenDir : public testing::TempDir {
 public:
  OpenDir() {
    chmod(path().c_str(), 0755);
    mkdir(Sub("out").c_str(), 0777);
    chmod(Sub("out").c_str(), 01777);
  }
};

std::string WriteKernel(const OpenDir& dir, int n, int unroll = 1) {
  const std::string path = dir.Sub(absl::StrCat("k", n, ".cu"));
  testing::WriteFile(path, Kernel(n, unroll));
  chmod(path.c_str(), 0644);
  return path;
}

// `jitcache compile` as `as` (or this process's user), with no in-process
// fallback: an answer comes from the daemon or not at all.
// `final_key`: the printed key is the one a later hit names (a miss is
// otherwise answered under its place's key while its place proof runs).
ProcessResult CompileAs(const std::string& socket, const std::string& source,
                        std::optional<RunAs> as = std::nullopt,
                        bool final_key = false) {
  static std::atomic<int> outputs{0};
  const std::string out = source.substr(0, source.rfind('/')) +
                          absl::StrCat("/out/", outputs++, ".ptx");
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "JITCACHE_NO_FALLBACK=1",
                                   CliBinary(),
                                   "--socket",
                                   socket,
                                   "compile",
                                   source,
                                   "--arch",
                                   "sm_90",
                                   "-o",
                                   out};
  if (final_key) argv.push_back("--wait-for-proof");
  return testing::RunProcessAs(argv, as);
}

ProcessResult CliAs(const std::string& socket,
                    const std::vector<std::string>& args,
                    std::optional<RunAs> as = std::nullopt) {
  std::vector<std::string> argv = {CliBinary(), "--socket", socket};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunProcessAs(argv, as);
}

// The "user UID NAME key=value ..." lines of `jitcache stats`, by uid.
std::map<uid_t, std::map<std::string, double>> UserRows(
    const std::string& stats) {
  std::map<uid_t, std::map<std::string, double>> rows;
  for (absl::string_view line : absl::StrSplit(stats, '\n')) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
    uid_t uid = 0;
    if (words.size() < 3 || words[0] != "user" ||
        !absl::SimpleAtoi(words[1], &uid)) {
      continue;
    }
    for (size_t i = 3; i < words.size(); ++i) {
      std::pair<std::string, std::string> kv = absl::StrSplit(words[i], '=');
      double value = 0;
      if (absl::SimpleAtod(kv.second, &value)) rows[uid][kv.first] = value;
    }
  }
  return rows;
}

// Kills the child *pid names (unless it is -1) when it goes out of scope:
// a failed assertion must not leave a daemon running.
class Reaper {
 public:
  explicit Reaper(pid_t* pid) : pid_(pid) {}
  ~Reaper() {
    if (*pid_ > 0) {
      kill(*pid_, SIGKILL);
      testing::WaitProcess(*pid_, absl::Minutes(1));
    }
  }
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

 private:
  pid_t* pid_;
};

std::string Comm(pid_t pid) {
  std::string comm = testing::ReadFile(absl::StrCat("/proc/", pid, "/comm"));
  if (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

// One request on the framed socket that is not a hit: the daemon answers with
// the single byte 1 ("ask gRPC"). Proves who serves that socket.
absl::StatusOr<char> AskFramedSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return absl::UnavailableError(std::strerror(errno));
  }
  const char empty_request[4] = {0, 0, 0, 0};
  char answer = 0;
  const bool ok = write(fd, empty_request, 4) == 4 && read(fd, &answer, 1) == 1;
  close(fd);
  if (!ok) return absl::UnavailableError("no answer");
  return answer;
}

TEST(SocketActivation, StartsOnTheFirstConnectionAndServesBothSockets) {
  const std::optional<std::string> activate =
      testing::FindProgram("systemd-socket-activate");
  if (!activate.has_value()) {
    GTEST_SKIP() << "systemd-socket-activate is not installed (Debian: "
                    "systemd); deploy/install-deps.sh installs it";
  }
  OpenDir dir;
  const std::string socket = dir.Sub("jc.sock");
  pid_t pid = testing::SpawnProcess(
      {.argv = {*activate, "-l", socket, "-l", socket + ".hit", DaemonBinary(),
                "--store=" + dir.Sub("store"), "--workers=1"},
       .output_path = dir.Sub("log")});
  Reaper reap(&pid);
  ASSERT_TRUE(testing::WaitFor([&] {
    return access(socket.c_str(), F_OK) == 0;
  })) << testing::ReadFile(dir.Sub("log"));
  // Nothing has connected: the daemon has not started.
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(Comm(pid), "systemd-socket-");

  const std::string source = WriteKernel(dir, 1);
  ProcessResult first = CompileAs(socket, source);
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(absl::StartsWith(first.output, "MISS")) << first.output;
  EXPECT_EQ(Comm(pid), "jitcached");
  ProcessResult second = CompileAs(socket, source);
  EXPECT_TRUE(absl::StartsWith(second.output, "HIT")) << second.output;
  // The passed PATH.framed socket is served too.
  absl::StatusOr<char> asked = AskFramedSocket(socket + ".hit");
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_EQ(*asked, 1);
  ProcessResult config = CliAs(socket, {"config"});
  EXPECT_TRUE(std::regex_search(config.output,
                                std::regex("\nsocket_activated +true\n")))
      << config.output;

  kill(pid, SIGTERM);
  EXPECT_EQ(testing::WaitProcess(pid, absl::Minutes(1)), 0)
      << testing::ReadFile(dir.Sub("log"));
  pid = -1;
  // The socket belongs to the manager: the daemon did not remove it.
  EXPECT_EQ(access(socket.c_str(), F_OK), 0);
}

// Restarts with the manager's sockets held open (as systemd holds them)
// while clients keep asking: every request is answered, by one daemon or
// the next.
TEST(SocketActivation, RestartsUnderLoadRefuseNoRequest) {
  OpenDir dir;
  const std::string socket = dir.Sub("jc.sock");
  absl::StatusOr<int> grpc_fd = testing::ListenOn(socket);
  absl::StatusOr<int> hit_fd = testing::ListenOn(socket + ".hit");
  ASSERT_TRUE(grpc_fd.ok() && hit_fd.ok());
  int generation = 0;
  auto start = [&] {
    return testing::SpawnProcess(
        {.argv = {DaemonBinary(), "--store=" + dir.Sub("store"), "--workers=2"},
         .listen_fds = {*grpc_fd, *hit_fd},
         .output_path = dir.Sub(absl::StrCat("log", generation++))});
  };
  pid_t daemon = start();
  Reaper reap(&daemon);
  absl::StatusOr<Client> client =
      Client::Connect({.socket_path = socket, .local_fallback = false});
  ASSERT_TRUE(client.ok());
  constexpr int kWarm = 4;
  for (int i = 0; i < kWarm; ++i) {
    absl::StatusOr<ObjectCode> warm =
        client->Compile(Program(Kernel(i), "warm.cu"), Sm90(), CodeType::kPtx);
    ASSERT_TRUE(warm.ok()) << warm.status() << "\n"
                           << testing::ReadFile(dir.Sub("log0"));
  }

  std::atomic<bool> stop{false};
  absl::Mutex mu;
  int answered = 0;
  std::vector<std::string> failures;
  int failed = 0;
  auto record = [&](bool ok, const std::string& what) {
    absl::MutexLock lock(&mu);
    if (ok) {
      ++answered;
    } else {
      ++failed;
      if (failures.size() < 10) failures.push_back(what);
    }
  };
  std::vector<std::thread> load;
  // Long-lived clients: hits, and now and then a new kernel (a miss).
  for (int t = 0; t < 3; ++t) {
    load.emplace_back([&, t] {
      absl::StatusOr<Client> c =
          Client::Connect({.socket_path = socket,
                           .local_fallback = false,
                           .compile_deadline = absl::Minutes(2)});
      for (int i = 0; !stop.load(); ++i) {
        const int n = i % 10 == 9 ? 1000 * (t + 1) + i : i % kWarm;
        const absl::Time sent = absl::Now();
        absl::StatusOr<ObjectCode> code =
            c->Compile(Program(Kernel(n), "load.cu"), Sm90(), CodeType::kPtx);
        record(code.ok(),
               code.ok()
                   ? ""
                   : absl::StrCat(
                         code.status().ToString(), " (kernel ", n, ", after ",
                         absl::FormatDuration(absl::Now() - sent), ")"));
      }
    });
  }
  // Fresh processes: the framed socket first, gRPC when it is not a hit.
  const std::string warm_source = dir.Sub("warm.cu");
  testing::WriteFile(warm_source, Kernel(0));
  load.emplace_back([&] {
    while (!stop.load()) {
      ProcessResult r = CompileAs(socket, warm_source);
      const bool ok = r.exit_code == 0 && absl::StartsWith(r.output, "HIT");
      record(ok, r.output);
    }
  });

  // Asynchronous compiles, a batch at a time.
  load.emplace_back([&] {
    absl::StatusOr<Client> c =
        Client::Connect({.socket_path = socket, .local_fallback = false});
    while (!stop.load()) {
      std::vector<AsyncResult<ObjectCode>> batch;
      for (int i = 0; i < 8; ++i) {
        batch.push_back(c->CompileAsync(Program(Kernel(i % kWarm), "load.cu"),
                                        Sm90(), CodeType::kPtx));
      }
      for (AsyncResult<ObjectCode>& handle : batch) {
        if (!handle.wait(absl::Minutes(2))) {
          record(false, "an asynchronous compile was never answered");
          continue;
        }
        record(handle.get().ok(),
               handle.get().ok()
                   ? ""
                   : "async: " + handle.get().status().ToString());
      }
    }
  });
  // Unmodified NVRTC programs through libnvrtc.so.13, each a new process:
  // the same bytes as the real NVRTC's, whichever daemon (or, for a process
  // that never reached one, the real library) answered.
  const std::string real_out = dir.Sub("nvrtc-real");
  ASSERT_EQ(mkdir(real_out.c_str(), 0700), 0);
  ProcessResult real = testing::RunProcess({JITCACHE_NVRTC_USER, real_out});
  ASSERT_EQ(real.exit_code, 0) << real.output;
  load.emplace_back([&] {
    for (int run = 0; !stop.load(); ++run) {
      const std::string out = dir.Sub(absl::StrCat("nvrtc-", run));
      mkdir(out.c_str(), 0700);
      ProcessResult r = testing::RunProcess(
          {"/usr/bin/env", std::string("LD_LIBRARY_PATH=") + JITCACHE_NVRTC_DIR,
           "JITCACHE_SCAN_CACHE=" + dir.Sub("scans"),
           "JITCACHE_SOCKET=" + socket, JITCACHE_NVRTC_USER, out});
      bool same = r.exit_code == 0 && r.output == real.output;
      for (const char* name : {"sm90.cubin", "sm90.ptx", "compute90.ptx",
                               "lto.ltoir", "optix.optixir"}) {
        same = same && testing::ReadFile(real_out + "/" + name) ==
                           testing::ReadFile(out + "/" + name);
      }
      record(same, "libnvrtc.so.13 run " + out + ": " + r.output);
    }
  });

  constexpr int kRestarts = 10;
  for (int restart = 0; restart < kRestarts; ++restart) {
    absl::SleepFor(absl::Milliseconds(1000));
    kill(daemon, SIGTERM);
    ASSERT_EQ(testing::WaitProcess(daemon, absl::Minutes(1)), 0)
        << testing::ReadFile(dir.Sub(absl::StrCat("log", generation - 1)));
    daemon = start();
    // The next restart comes once this daemon serves, as an operator's
    // would (clients keep going meanwhile).
    ASSERT_TRUE(testing::WaitFor([&] {
      return absl::StrContains(
          testing::ReadFile(dir.Sub(absl::StrCat("log", generation - 1))),
          "jitcached: ready on");
    })) << "daemon "
        << generation - 1 << " is not ready; its log:\n"
        << testing::ReadFile(dir.Sub(absl::StrCat("log", generation - 1)))
        << "\nthe one before:\n"
        << testing::ReadFile(dir.Sub(absl::StrCat("log", generation - 2)));
  }
  absl::SleepFor(absl::Milliseconds(1500));
  stop = true;
  for (std::thread& t : load) t.join();
  absl::StatusOr<DaemonStats> last = client->Stats();
  ASSERT_TRUE(last.ok()) << last.status();
  kill(daemon, SIGTERM);
  EXPECT_EQ(testing::WaitProcess(daemon, absl::Minutes(1)), 0);
  daemon = -1;
  close(*grpc_fd);
  close(*hit_fd);

  absl::MutexLock lock(&mu);
  std::printf("%d requests answered across %d restarts, %d failed\n", answered,
              kRestarts, failed);
  EXPECT_EQ(failed, 0) << "first failures: "
                       << absl::StrJoin(failures, "\n---\n");
  EXPECT_GT(answered, 20);
  // The last daemon served requests of its own, from the same store.
  EXPECT_GT(last->requests, 0u);
  EXPECT_GE(last->store_entries, static_cast<uint64_t>(kWarm));
}

TEST(ServiceManager, NotifiesReadyWatchdogAndStopping) {
  OpenDir dir;
  const std::string notify = dir.Sub("notify");
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, notify.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const timeval timeout{0, 100000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::vector<std::string> messages;
  auto receive_until = [&](const std::string& wanted, absl::Duration limit) {
    const absl::Time deadline = absl::Now() + limit;
    while (absl::Now() < deadline) {
      char buffer[4096];
      const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) continue;
      messages.emplace_back(buffer, n);
      if (absl::StrContains(messages.back(), wanted)) return true;
    }
    return false;
  };

  const std::string socket = dir.Sub("jc.sock");
  pid_t pid = testing::SpawnProcess(
      {.argv = {DaemonBinary(), "--socket=" + socket, "--store=:memory:"},
       .env = {"NOTIFY_SOCKET=" + notify, "WATCHDOG_USEC=300000"},
       .output_path = dir.Sub("log")});
  Reaper reap(&pid);
  ASSERT_TRUE(receive_until("READY=1", absl::Minutes(1)))
      << testing::ReadFile(dir.Sub("log"));
  EXPECT_TRUE(absl::StrContains(messages.back(), "STATUS=serving on " + socket))
      << messages.back();
  // Ready means serving: the first try answers.
  absl::StatusOr<Client> client = Client::Connect({.socket_path = socket});
  EXPECT_TRUE(client->Ping().ok());
  // A third of 300 ms: several pings within a couple of seconds.
  int pings = 0;
  const absl::Time until = absl::Now() + absl::Seconds(2);
  while (absl::Now() < until) {
    if (receive_until("WATCHDOG=1", until - absl::Now())) ++pings;
  }
  EXPECT_GE(pings, 2);
  kill(pid, SIGTERM);
  EXPECT_TRUE(receive_until("STOPPING=1", absl::Minutes(1)));
  EXPECT_EQ(testing::WaitProcess(pid, absl::Minutes(1)), 0);
  pid = -1;
  close(fd);
}

// Why a client could not connect to `path` now ("" if it could).
std::string ConnectError(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  std::string error;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    error = std::strerror(errno);
  }
  close(fd);
  return error;
}

// From the moment either socket file exists, every look at it shows its
// final mode (and group), and a client that finds it can connect: nobody
// catches a socket half made. PATH.hit is in place before PATH, which
// clients take for "the daemon is up". Polled without pause from the
// daemon's start, so that a window of a few microseconds is seen.
TEST(SocketFiles, AreBornWithTheirModeAndGroupAndListening) {
  OpenDir dir;
  const std::string socket = dir.Sub("jc.sock");
  const std::string hit = socket + ".hit";
  const bool root = geteuid() == 0;
  std::vector<std::string> argv = {DaemonBinary(), "--socket=" + socket,
                                   "--store=:memory:", "--socket_mode=0660"};
  if (root) argv.push_back("--socket_group=nogroup");
  pid_t pid =
      testing::SpawnProcess({.argv = argv, .output_path = dir.Sub("log")});
  Reaper reap(&pid);
  std::vector<std::string> wrong;
  int looks = 0;
  bool saw_hit = false;
  bool saw_socket = false;
  const absl::Time deadline = absl::Now() + absl::Minutes(2);
  while (!(saw_hit && saw_socket) && absl::Now() < deadline) {
    for (const std::string* path : {&hit, &socket}) {
      struct stat st;
      if (lstat(path->c_str(), &st) != 0) continue;
      ++looks;
      if ((st.st_mode & 0777) != 0660) {
        wrong.push_back(
            absl::StrFormat("%s has mode 0%o", *path, st.st_mode & 0777));
      }
      if (root && st.st_gid != kNogroup) {
        wrong.push_back(absl::StrCat(*path, " has group ", st.st_gid));
      }
      bool& seen = path == &hit ? saw_hit : saw_socket;
      if (seen) continue;
      seen = true;
      if (std::string error = ConnectError(*path); !error.empty()) {
        wrong.push_back(
            absl::StrCat(*path, " refused the first connection: ", error));
      }
      // Looked at after PATH was seen (not by the earlier look, which a
      // birth between the two may have passed): PATH.hit must be there.
      struct stat hit_st;
      if (path == &socket && lstat(hit.c_str(), &hit_st) != 0) {
        wrong.push_back(absl::StrCat(*path, " appeared before ", hit));
      }
    }
  }
  ASSERT_TRUE(saw_hit && saw_socket) << testing::ReadFile(dir.Sub("log"));
  EXPECT_GT(looks, 0);
  EXPECT_TRUE(wrong.empty()) << absl::StrJoin(wrong, "\n");
  // The private names the sockets were born under are gone.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "jc.sock" || name == "jc.sock.hit" ||
                name == "jc.sock.lock" || name == "log" || name == "out")
        << "left behind: " << name;
  }
  kill(pid, SIGTERM);
  EXPECT_EQ(testing::WaitProcess(pid, absl::Minutes(1)), 0);
  pid = -1;
}

// A daemon killed while its sockets were being born leaves their private
// names (".jc.sock.RANDOM", ".jc.sock.hit.RANDOM", bound, nobody
// listening): the next daemon on the path removes them, and nothing else.
TEST(SocketFiles, NamesLeftByADaemonThatDiedAreRemoved) {
  OpenDir dir;
  auto bound = [&](const std::string& name) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, dir.Sub(name).c_str(),
                 sizeof(addr.sun_path) - 1);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
        << name;
    close(fd);
  };
  bound(".jc.sock.abcd1234");
  bound(".jc.sock.hit.0a1b2c3d");
  bound(".jc.sock.short");  // not a name the daemon gives
  testing::WriteFile(dir.Sub(".jc.sock.ef567890"), "a file, not a socket");
  testing::DaemonProcess daemon(dir.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  EXPECT_FALSE(std::filesystem::exists(dir.Sub(".jc.sock.abcd1234")));
  EXPECT_FALSE(std::filesystem::exists(dir.Sub(".jc.sock.hit.0a1b2c3d")));
  EXPECT_TRUE(std::filesystem::exists(dir.Sub(".jc.sock.short")));
  EXPECT_TRUE(std::filesystem::exists(dir.Sub(".jc.sock.ef567890")));
}

class TeamAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "switching to other uids needs root";
    }
  }
};

TEST_F(TeamAccess, GroupMembersCompileAndHitOthersCannotConnect) {
  OpenDir dir;
  testing::DaemonProcess daemon(
      dir.Sub("jc.sock"), dir.Sub("store"),
      {"--socket_group=nogroup", "--socket_mode=0660"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  struct stat st;
  ASSERT_EQ(stat(daemon.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, kNogroup);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  ASSERT_EQ(stat((daemon.socket() + ".hit").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);

  const std::string source = WriteKernel(dir, 7);
  ProcessResult miss = CompileAs(daemon.socket(), source, kMember);
  EXPECT_EQ(miss.exit_code, 0) << miss.output;
  EXPECT_TRUE(absl::StartsWith(miss.output, "MISS")) << miss.output;
  ProcessResult hit = CompileAs(daemon.socket(), source, kMember);
  EXPECT_TRUE(absl::StartsWith(hit.output, "HIT")) << hit.output;
  ProcessResult other =
      CompileAs(daemon.socket(), source, kSupplementaryMember);
  EXPECT_TRUE(absl::StartsWith(other.output, "HIT")) << other.output;

  ProcessResult outsider = CompileAs(daemon.socket(), source, kOutsider);
  EXPECT_EQ(outsider.exit_code, 3) << outsider.output;
  EXPECT_TRUE(absl::StrContains(outsider.output, "ermission denied"))
      << outsider.output;

  // Root sees every user; a member sees only their own row.
  const auto rows = UserRows(CliAs(daemon.socket(), {"stats"}).output);
  ASSERT_TRUE(rows.count(kNobody)) << "no row for nobody";
  EXPECT_EQ(rows.at(kNobody).at("requests"), 2);
  EXPECT_EQ(rows.at(kNobody).at("misses"), 1);
  EXPECT_EQ(rows.at(kNobody).at("hits"), 1);
  EXPECT_GT(rows.at(kNobody).at("compile_seconds"), 0);
  ASSERT_TRUE(rows.count(4242));
  EXPECT_EQ(rows.at(4242).at("hits"), 1);
  EXPECT_EQ(rows.count(4343), 0u);
  const auto own = UserRows(CliAs(daemon.socket(), {"stats"}, kMember).output);
  EXPECT_EQ(own.size(), 1u);
  EXPECT_TRUE(own.count(kNobody));
}

// A member of the socket group cannot read through the daemon a file they
// cannot read themselves: a quoted include of a root-only file, -include of
// it, and a request that names it without sending it. The daemon's compile
// sees only what the request carried; the library cannot read the file to
// send it, so the caller's own NVRTC (as that user) gets "cannot open".
TEST_F(TeamAccess, AUserCannotReadThroughTheDaemonWhatTheyCannotRead) {
  OpenDir dir;
  const std::string secret_dir = dir.Sub("root-only");
  ASSERT_EQ(mkdir(secret_dir.c_str(), 0700), 0);
  const std::string secret = secret_dir + "/secret.h";
  constexpr char kSecret[] = "the-root-only-secret-4711";
  testing::WriteFile(secret, absl::StrCat("#error ", kSecret, "\n"));
  chmod(secret.c_str(), 0600);
  testing::DaemonProcess daemon(
      dir.Sub("jc.sock"), dir.Sub("store"),
      {"--socket_group=nogroup", "--socket_mode=0660"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();

  const std::string quoted = dir.Sub("quoted.cu");
  testing::WriteFile(quoted,
                     absl::StrCat("#include \"", secret, "\"\n", Kernel(60)));
  chmod(quoted.c_str(), 0644);
  const std::string plain = WriteKernel(dir, 61);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"compile", quoted, "--arch", "sm_90", "-o",
                                 dir.Sub("out/q.ptx")},
        std::vector<std::string>{"compile", plain, "--arch", "sm_90",
                                 "-include", secret, "-o",
                                 dir.Sub("out/p.ptx")}}) {
    ProcessResult r = CliAs(daemon.socket(), args, kMember);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_FALSE(absl::StrContains(r.output, kSecret)) << r.output;
  }
  // A request that names the file without sending it (as a client that
  // claims to have scanned): the daemon's compile does not see it at all.
  v1::CompileRequest request;
  request.set_source(absl::StrCat("#include \"secret.h\"\n", Kernel(62)));
  request.set_program_name("named.cu");
  request.add_options("-arch=sm_90");
  request.set_target(v1::TARGET_PTX);
  request.set_exact_include_path(true);
  request.set_working_directory(secret_dir);
  request.set_includes_resolved(true);
  request.set_included_set_sha256(std::string(IncludedSetDigest({}).AsBytes()));
  auto stub = v1::JitCache::NewStub(grpc::CreateChannel(
      "unix:" + daemon.socket(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::CompileResponse response;
  grpc::Status status = stub->Compile(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.outcome(), v1::OUTCOME_COMPILE_ERROR);
  EXPECT_TRUE(absl::StrContains(response.log(), "cannot open source file"))
      << response.log();
  EXPECT_FALSE(absl::StrContains(response.log(), kSecret)) << response.log();

  // Root, who can read it, gets it (the compile did read the file then).
  ProcessResult root =
      CliAs(daemon.socket(),
            {"compile", quoted, "--arch", "sm_90", "-o", dir.Sub("out/r.ptx")});
  EXPECT_TRUE(absl::StrContains(root.output, kSecret)) << root.output;
}

TEST_F(TeamAccess, CompileWorkersAreSharedPerUserNotPerBacklog) {
  OpenDir dir;
  testing::DaemonProcess daemon(
      dir.Sub("jc.sock"), ":memory:",
      {"--socket_group=nogroup", "--socket_mode=0660", "--workers=1"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  // A backlog of 16 slow cubin compiles from one user, in two processes.
  std::vector<pid_t> backlog;
  for (int part = 0; part < 2; ++part) {
    std::string manifest;
    for (int i = 0; i < 8; ++i) {
      absl::StrAppend(&manifest, WriteKernel(dir, 100 + part * 8 + i, 1000),
                      " --arch sm_90 --target cubin\n");
    }
    const std::string path = dir.Sub(absl::StrCat("manifest", part));
    testing::WriteFile(path, manifest);
    chmod(path.c_str(), 0644);
    backlog.push_back(testing::SpawnProcess(
        {.argv = {"/usr/bin/env", "JITCACHE_NO_FALLBACK=1",
                  CliBinary() + "-full", "--socket", daemon.socket(),
                  "precompile", path},
         .output_path = "/dev/null",
         .as = kMember}));
  }
  auto nobody = [&] {
    return UserRows(CliAs(daemon.socket(), {"stats"}).output)[kNobody];
  };
  ASSERT_TRUE(testing::WaitFor([&] { return nobody()["queued"] >= 10; }))
      << daemon.Log();

  // Another user's one compile runs next but one, not after the backlog.
  ProcessResult other =
      CompileAs(daemon.socket(), WriteKernel(dir, 999), kSupplementaryMember);
  EXPECT_TRUE(absl::StartsWith(other.output, "MISS")) << other.output;
  const double backlog_done = nobody()["misses"];
  std::printf(
      "the other user's compile finished after %.0f of 16 backlog "
      "compiles\n",
      backlog_done);
  EXPECT_LE(backlog_done, 8) << "the other user waited for " << backlog_done
                             << " of 16 backlog compiles";
  for (pid_t pid : backlog) {
    EXPECT_EQ(testing::WaitProcess(pid, absl::Minutes(5)), 0);
  }
  EXPECT_EQ(nobody()["misses"], 16);
}

TEST(Observability, MetricsParseAndMoveHealthServesAndLogsNameKeys) {
  OpenDir dir;
  testing::DaemonProcess daemon(
      dir.Sub("jc.sock"), dir.Sub("store"),
      std::vector<std::string>{"--metrics_address=127.0.0.1:0",
                               "--log_level=debug"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  // "metrics on http://127.0.0.1:0/metrics (port N)": the daemon may
  // answer its socket a moment before the line reaches its log.
  std::string log = daemon.Log();
  for (int i = 0; i < 200 && log.find("/metrics (port ") == std::string::npos;
       ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    log = daemon.Log();
  }
  const size_t at = log.find("/metrics (port ");
  ASSERT_NE(at, std::string::npos) << log;
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(log.substr(at + 15, log.find(')', at) - at - 15),
                               &port));

  auto scrape = [&] {
    absl::StatusOr<std::string> body = testing::HttpGet(port, "/metrics");
    EXPECT_TRUE(body.ok()) << body.status();
    absl::StatusOr<std::map<std::string, double>> parsed =
        testing::ParsePrometheusText(body.ok() ? *body : "");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return parsed.ok() ? *parsed : std::map<std::string, double>{};
  };
  auto before = scrape();
  ASSERT_TRUE(before.count("jitcache_requests_total"));
  ASSERT_TRUE(before.count("jitcache_hit_latency_seconds_bucket{le=\"+Inf\"}"));
  EXPECT_EQ(before["jitcache_store_max_bytes"], 10.0 * (1 << 30));

  const std::string source = WriteKernel(dir, 3);
  ProcessResult miss =
      CompileAs(daemon.socket(), source, std::nullopt, /*final_key=*/true);
  ProcessResult hit = CompileAs(daemon.socket(), source);
  ASSERT_TRUE(absl::StartsWith(hit.output, "HIT")) << hit.output;
  ProcessResult bad = testing::RunProcess(
      {CliBinary(), "--socket", daemon.socket(), "compile", source, "--arch",
       "sm_90", "--no-such-option", "-o", "/dev/null"});
  EXPECT_NE(bad.exit_code, 0);

  auto after = scrape();
  EXPECT_EQ(
      after["jitcache_requests_total"] - before["jitcache_requests_total"], 3);
  EXPECT_EQ(after["jitcache_hits_total"] - before["jitcache_hits_total"], 1);
  EXPECT_EQ(after["jitcache_misses_total"] - before["jitcache_misses_total"],
            1);
  EXPECT_EQ(after["jitcache_rejected_total{reason=\"invalid_argument\"}"] -
                before["jitcache_rejected_total{reason=\"invalid_argument\"}"],
            1);
  EXPECT_EQ(after["jitcache_hit_latency_seconds_count"] -
                before["jitcache_hit_latency_seconds_count"],
            1);
  EXPECT_EQ(after["jitcache_compile_duration_seconds_count"], 1);
  EXPECT_GT(after["jitcache_compile_duration_seconds_sum"], 0);
  EXPECT_EQ(after["jitcache_store_entries"], 1);
  EXPECT_GT(after["jitcache_store_bytes"], 0);
  EXPECT_EQ(after["jitcache_user_requests_total{uid=\"0\",user=\"root\"}"], 3);

  // One definition: every statistic of StatsResponse is exported and
  // printed by `jitcache stats` under its own name, with the same value.
  ProcessResult stats =
      testing::RunProcess({CliBinary(), "--socket", daemon.socket(), "stats"});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  std::map<std::string, std::string> printed;
  for (absl::string_view line : absl::StrSplit(stats.output, '\n')) {
    const size_t space = line.find(' ');
    if (space != absl::string_view::npos && !absl::StartsWith(line, "user ")) {
      printed[std::string(line.substr(0, space))] =
          std::string(line.substr(space + 1));
    }
  }
  const google::protobuf::Descriptor& d = *v1::StatsResponse::descriptor();
  int stats_checked = 0;
  for (int i = 0; i < d.field_count(); ++i) {
    const google::protobuf::FieldDescriptor& f = *d.field(i);
    if (f.is_repeated()) continue;  // rejected and users: checked above
    ++stats_checked;
    EXPECT_FALSE(f.options().GetExtension(v1::stat_help).empty())
        << f.name() << " has no stat_help";
    const std::string metric =
        absl::StrCat("jitcache_", f.name(),
                     f.options().GetExtension(v1::stat_gauge) ? "" : "_total");
    EXPECT_TRUE(after.count(metric)) << metric << " is not exported";
    EXPECT_TRUE(printed.count(f.name())) << f.name() << " is not printed";
  }
  EXPECT_GT(stats_checked, 30);
  for (const char* stable : {"requests", "hits", "misses", "store_entries"}) {
    const std::string gauge = absl::StrCat("jitcache_", stable);
    const double exported =
        after.count(gauge) ? after[gauge] : after[gauge + "_total"];
    EXPECT_EQ(printed[stable], absl::StrCat(exported)) << stable;
  }

  ProcessResult health =
      testing::RunProcess({CliBinary(), "--socket", daemon.socket(), "health"});
  EXPECT_EQ(health.exit_code, 0) << health.output;
  EXPECT_EQ(health.output, "SERVING\n");

  // --log_level=debug: each request is a line with its key and its user.
  const std::string key = miss.output.substr(9, 64);  // "MISS key <64 hex>"
  const std::string lines = daemon.Log();
  EXPECT_TRUE(
      absl::StrContains(lines, absl::StrCat("compiled ", key, " uid 0")))
      << lines;
  EXPECT_TRUE(absl::StrContains(lines, absl::StrCat("hit ", key, " uid 0")))
      << lines;
  daemon.Stop();
  ProcessResult down =
      testing::RunProcess({CliBinary(), "--socket", daemon.socket(), "health"});
  EXPECT_EQ(down.exit_code, 3) << down.output;
}

// Under systemd, stderr is the journal (JOURNAL_STREAM names it): lines
// carry their syslog priority and leave the time to the journal.
TEST(Observability, LinesToTheJournalCarryTheirPriority) {
  OpenDir dir;
  const std::string log = dir.Sub("journal");
  testing::WriteFile(log, "");
  struct stat st;
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  const std::string socket = dir.Sub("jc.sock");
  pid_t serving = testing::SpawnProcess(
      {.argv = {DaemonBinary(), "--socket=" + socket, "--store=:memory:"},
       .env = {absl::StrCat("JOURNAL_STREAM=", st.st_dev, ":", st.st_ino)},
       .output_path = log});
  Reaper reap(&serving);
  ASSERT_TRUE(testing::WaitFor([&] {
    return absl::StrContains(testing::ReadFile(log), "serving on");
  })) << testing::ReadFile(log);
  kill(serving, SIGTERM);
  EXPECT_EQ(testing::WaitProcess(serving, absl::Minutes(1)), 0);
  serving = -1;
  const std::string lines = testing::ReadFile(log);
  EXPECT_TRUE(
      std::regex_search(lines, std::regex("(^|\n)<6>daemon\\.cc:[0-9]+\\] "
                                          "jitcached serving on")))
      << lines;
  EXPECT_FALSE(std::regex_search(lines, std::regex("(^|\\n)I20[0-9][0-9]-")))
      << lines;
}

}  // namespace
}  // namespace jitcache
