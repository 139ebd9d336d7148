// The daemon's framed socket and the `jitcache` front end that uses it.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "client/cli/direct_memo.h"
#include "client/wire/compile_wire.h"
#include "client/wire/framed_channel.h"
#include "common/framed_protocol.h"
#include "common/length_frame.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "jitcache/v1/wire_fields.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/kernels.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

int Connect(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) !=
      0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends raw bytes; returns the first answer byte, or -1 if the daemon closed.
int Ask(const std::string& path, const std::string& bytes) {
  const int fd = Connect(path);
  if (fd < 0) return -2;
  if (send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(bytes.size())) {
    close(fd);
    return -3;
  }
  unsigned char status = 0;
  const ssize_t n = read(fd, &status, 1);
  close(fd);
  return n == 1 ? status : -1;
}

class FramedSocketTest : public testing::DaemonFixture {
 protected:
  std::vector<std::string> CompileArgs() {
    std::ofstream(dir_.Sub("saxpy.cu")) << kernels::kSaxpy;
    return {testing::CliBinary(),
            "--socket",
            dir_.Sub("s.sock"),
            "compile",
            dir_.Sub("saxpy.cu"),
            "--arch",
            "sm_90",
            "--target",
            "cubin",
            "-o",
            dir_.Sub("saxpy.cubin")};
  }
};

TEST_F(FramedSocketTest, HostileRequestsAreAnsweredAskGrpcAndTheDaemonStaysUp) {
  const std::string hit = dir_.Sub("s.sock.hit");
  const std::string garbage = std::string("\x0a\x00\x00\x00", 4) + "0123456789";
  EXPECT_EQ(Ask(hit, garbage), 1);
  EXPECT_EQ(Ask(hit, std::string("\xff\xff\xff\x7f", 4)), 1);  // 2 GiB claimed
  EXPECT_EQ(Ask(hit, std::string("\x05\x00", 2)), -1);  // cut short: closed
  // Stalled peers: more than the daemon has threads for this socket.
  std::vector<int> stalled;
  for (int i = 0; i < 8; ++i) stalled.push_back(Connect(hit));
  auto first = testing::RunProcess(CompileArgs());
  auto second = testing::RunProcess(CompileArgs());
  for (int fd : stalled) close(fd);
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, StartsWith("HIT key "));
  EXPECT_TRUE(client_->Ping().ok());
}

// A hit whose request is still arriving when the daemon is told to stop
// is answered before it exits: in-flight hits finish on SIGTERM.
TEST_F(FramedSocketTest, AHitUnderwayWhenTheDaemonStopsIsAnswered) {
  compile_wire::Request request;
  request.source = kernels::kSaxpy;
  request.program_name = "saxpy.cu";
  request.options = {"-arch=sm_90"};
  request.target = 2;  // cubin
  const std::string body = compile_wire::Encode(request);
  {
    // The entry, through gRPC with the very same request.
    v1::CompileRequest compile;
    ASSERT_TRUE(compile.ParseFromString(body));
    auto stub = v1::JitCache::NewStub(grpc::CreateChannel(
        "unix:" + dir_.Sub("s.sock"), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    v1::CompileResponse response;
    const grpc::Status status = stub->Compile(&context, compile, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.outcome(), v1::OUTCOME_OK) << response.log();
  }
  const uint32_t n = static_cast<uint32_t>(body.size());
  const std::string frame =
      std::string({static_cast<char>(n), static_cast<char>(n >> 8),
                   static_cast<char>(n >> 16), static_cast<char>(n >> 24)}) +
      body;
  const size_t half = frame.size() / 2;

  const int fd = Connect(dir_.Sub("s.sock.hit"));
  ASSERT_GE(fd, 0);
  ASSERT_EQ(send(fd, frame.data(), half, MSG_NOSIGNAL),
            static_cast<ssize_t>(half));
  absl::SleepFor(absl::Milliseconds(300));  // accepted, request under way
  ASSERT_EQ(kill(daemon_->pid(), SIGTERM), 0);
  absl::SleepFor(absl::Milliseconds(200));  // the daemon is stopping
  ASSERT_EQ(send(fd, frame.data() + half, frame.size() - half, MSG_NOSIGNAL),
            static_cast<ssize_t>(frame.size() - half));
  std::string answer;
  char chunk[65536];
  ssize_t got;
  while ((got = read(fd, chunk, sizeof(chunk))) > 0) answer.append(chunk, got);
  close(fd);
  ASSERT_GE(answer.size(), 5u) << "no answer; daemon log:\n" << daemon_->Log();
  EXPECT_EQ(answer[0], 0) << "told to ask gRPC instead";
  const std::optional<compile_wire::Response> response =
      compile_wire::Decode(answer.substr(5));
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->served, 1);  // HIT
  EXPECT_FALSE(response->object.empty());
  EXPECT_EQ(daemon_->Stop(), 0) << daemon_->Log();
}

// The daemon's resident memory, in bytes.
uint64_t Rss(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) << 10;
  }
  return 0;
}

// Slow and idle peers cannot starve the framed socket: a request has a few
// seconds in all (not per read), memory follows the bytes that arrive (not
// a declared length), and one user's connections past a few are closed at
// once; hits go on being served meanwhile.
TEST_F(FramedSocketTest, SlowIdleAndGreedyPeersCannotStarveIt) {
  const std::string hit = dir_.Sub("s.sock.hit");
  ASSERT_EQ(testing::RunProcess(CompileArgs()).exit_code, 0);  // the entry

  // A trickle: one byte every 500 ms. The daemon drops it once its time
  // for the whole request is up (2 s), long before it could finish.
  const int trickle = Connect(hit);
  ASSERT_GE(trickle, 0);
  const absl::Time start = absl::Now();
  bool dropped = false;
  for (int i = 0; i < 40 && !dropped; ++i) {
    const char byte = 0x10;
    dropped = send(trickle, &byte, 1, MSG_NOSIGNAL) != 1;
    pollfd p{trickle, POLLIN, 0};
    if (!dropped && poll(&p, 1, 500) == 1) {
      char c;
      dropped = read(trickle, &c, 1) <= 0;
    }
  }
  close(trickle);
  EXPECT_TRUE(dropped);
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));

  // Greedy: connections that each claim a 60 MB request and send nothing
  // more. The daemon keeps at most a few of one user's, allocates nothing
  // for the claims, and closes the rest at once.
  const uint64_t rss_before = Rss(daemon_->pid());
  std::vector<int> greedy;
  for (int i = 0; i < 64; ++i) {
    const int fd = Connect(hit);
    if (fd < 0) continue;
    const uint32_t claim = 60u << 20;
    const char header[4] = {
        static_cast<char>(claim), static_cast<char>(claim >> 8),
        static_cast<char>(claim >> 16), static_cast<char>(claim >> 24)};
    send(fd, header, sizeof(header), MSG_NOSIGNAL);
    greedy.push_back(fd);
  }
  int closed_by_daemon = 0;
  for (int fd : greedy) {
    // Closed at once (a held one would also end, after its 2 s: counted
    // too, so the bound below allows for them).
    pollfd p{fd, POLLIN, 0};
    char c;
    // (Closed with the claim unread, the peer may see a reset, not EOF.)
    if (poll(&p, 1, 1000) == 1 && read(fd, &c, 1) <= 0) ++closed_by_daemon;
  }
  EXPECT_GE(closed_by_daemon, 64 - 8);
  EXPECT_LT(Rss(daemon_->pid()), rss_before + (64u << 20));
  // Hits are still answered (by this socket or, for this user, by gRPC).
  auto during = testing::RunProcess(CompileArgs());
  EXPECT_EQ(during.exit_code, 0) << during.output;
  EXPECT_THAT(during.output, StartsWith("HIT key "));
  for (int fd : greedy) close(fd);
  EXPECT_TRUE(client_->Ping().ok());
}

TEST_F(FramedSocketTest, TheFrontEndServesHitsAndHandsTheRestToTheFullClient) {
  auto miss = testing::RunProcess(CompileArgs());
  auto hit = testing::RunProcess(CompileArgs());
  EXPECT_THAT(miss.output, StartsWith("MISS key "));
  EXPECT_THAT(hit.output, StartsWith("HIT key "));
  std::ifstream in(dir_.Sub("saxpy.cubin"), std::ios::binary);
  const std::string cubin(std::istreambuf_iterator<char>(in), {});
  ProgramOptions options;
  options.arch = "sm_90";
  auto direct = client_->Compile(Program(kernels::kSaxpy, "saxpy.cu"), options,
                                 CodeType::kCubin);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(cubin, direct->bytes);
  // Errors still come from the full client, which names them.
  auto bad = testing::RunProcess({testing::CliBinary(), "--socket",
                                  dir_.Sub("s.sock"), "compile",
                                  dir_.Sub("saxpy.cu"), "--target", "cubin"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_THAT(bad.output, HasSubstr("sm_XX"));
  auto help = testing::RunProcess({testing::CliBinary(), "--help"});
  EXPECT_THAT(help.output, HasSubstr("precompile MANIFEST"));
}

// The front end alone (no jitcache-full next to it, so that anything it
// does not serve itself fails) answers a compile whose program includes
// headers from its directory and an -I directory, from the memo the full
// client left, and refuses as soon as anything its include scan read or
// found absent may have changed.
class FrontEndMemoTest : public testing::DaemonFixture {
 protected:
  static constexpr char kProgram[] =
      "#include \"h.cuh\"\n#include <g.cuh>\n"
      "extern \"C\" __global__ void k(float* x) "
      "{ x[threadIdx.x] *= SCALE + OFFSET; }\n";

  void SetUp() override {
    DaemonFixture::SetUp();
    std::filesystem::create_directories(dir_.Sub("src/inc"));
    std::filesystem::create_directories(dir_.Sub("src/first"));
    std::filesystem::create_directories(dir_.Sub("front"));
    std::filesystem::copy_file(testing::CliBinary(),
                               dir_.Sub("front/jitcache"));
    Write("src/k.cu", kProgram);
    Write("src/inc/h.cuh", "#define SCALE 2.0f\n");
    Write("src/inc/g.cuh", "#define OFFSET 1.0f\n");
  }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.Sub(name)) << text;
  }

  // A file changed in the last two seconds is not trusted by its stamp:
  // no memo is kept for a scan that read one.
  static void LetChangesSettle() { absl::SleepFor(absl::Milliseconds(2200)); }

  // `jitcache compile` in src/ with `cli`; returns its result and the
  // object it wrote.
  // `place`: the checkout that holds the program and gets the output.
  testing::ProcessResult Compile(const std::string& cli, std::string* object,
                                 const std::string& cwd = "src",
                                 const std::string& place = "src") {
    const std::string output = dir_.Sub(place + "/k.cubin");
    std::filesystem::remove(output);
    testing::ProcessResult result = testing::RunProcess(
        {"/usr/bin/env", "-C", dir_.Sub(cwd),
         "JITCACHE_SCAN_CACHE=" + dir_.Sub("scans"), cli, "--socket",
         dir_.Sub("s.sock"), "compile", dir_.Sub(place + "/k.cu"), "-Ifirst",
         "-Iinc", "--arch", "sm_90", "--target", "cubin", "-o", output});
    std::ifstream in(output, std::ios::binary);
    object->assign(std::istreambuf_iterator<char>(in), {});
    return result;
  }
  testing::ProcessResult Full(std::string* object) {
    return Compile(testing::CliBinary(), object);
  }
  testing::ProcessResult FrontAlone(std::string* object,
                                    const std::string& cwd = "src") {
    return Compile(dir_.Sub("front/jitcache"), object, cwd);
  }
  // The front end alone in another checkout, run from there.
  testing::ProcessResult FrontAloneIn(const std::string& place,
                                      std::string* object) {
    return Compile(dir_.Sub("front/jitcache"), object, place, place);
  }
  // `jitcache compile PLACE/k.cu OPTIONS` with `cli`, run from PLACE.
  testing::ProcessResult CompileIn(const std::string& cli,
                                   const std::string& place,
                                   const std::vector<std::string>& options) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "-C",
                                     dir_.Sub(place),
                                     "JITCACHE_SCAN_CACHE=" + dir_.Sub("scans"),
                                     cli,
                                     "--socket",
                                     dir_.Sub("s.sock"),
                                     "compile",
                                     dir_.Sub(place + "/k.cu")};
    argv.insert(argv.end(), options.begin(), options.end());
    for (std::string arg : {std::string("--arch"), std::string("sm_90"),
                            std::string("--target"), std::string("cubin"),
                            std::string("-o"), dir_.Sub(place + "/k.cubin")}) {
      argv.push_back(std::move(arg));
    }
    return testing::RunProcess(argv);
  }
  size_t DirectMemos() {
    size_t n = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator(dir_.Sub("scans/direct"))) {
      ++n;
    }
    return n;
  }

  // The oracle: the cubin the real NVRTC makes of the program as it now
  // is, in src/, with the options the compile sends (the daemon's
  // toolkit include directories last, as jitcache's client asks).
  std::string RealNvrtcCubin(const std::string& place = "src") {
    auto stub = v1::JitCache::NewStub(grpc::CreateChannel(
        "unix:" + dir_.Sub("s.sock"), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    v1::PingResponse pong;
    EXPECT_TRUE(stub->Ping(&context, v1::PingRequest(), &pong).ok());
    std::string cases = "case real\nname k.cu\nsource " +
                        dir_.Sub(place + "/k.cu") + "\nchdir " +
                        dir_.Sub(place) +
                        "\nopt -arch=sm_90\nopt -Ifirst\nopt -Iinc\n";
    for (const std::string& d : pong.include_dirs())
      cases += "opt -I" + d + "\n";
    cases += "end\n";
    std::ofstream(dir_.Sub("real.cases")) << cases;
    std::filesystem::create_directories(dir_.Sub("real"));
    auto ran = testing::RunProcess(
        {JITCACHE_NVRTC_CASE, dir_.Sub("real.cases"), dir_.Sub("real")});
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    // "cubin CODE SIZE\n" then SIZE bytes (tests/testing/nvrtc_case.c).
    std::ifstream in(dir_.Sub("real/real"), std::ios::binary);
    const std::string result(std::istreambuf_iterator<char>(in), {});
    const size_t at = result.find("\ncubin 0 ");
    if (at == std::string::npos) {
      ADD_FAILURE() << "the real NVRTC made no cubin:\n" << result;
      return "";
    }
    const size_t line_end = result.find('\n', at + 1);
    const size_t size = std::stoul(result.substr(at + 9, line_end - (at + 9)));
    return result.substr(line_end + 1, size);
  }
};

TEST_F(FrontEndMemoTest, ServesOnlyWhileNothingTheScanReadChanged) {
  LetChangesSettle();
  std::string first, again;
  auto miss = Full(&first);
  ASSERT_EQ(miss.exit_code, 0) << miss.output;
  ASSERT_THAT(miss.output, StartsWith("MISS key "));
  auto hit = FrontAlone(&again);
  ASSERT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_THAT(hit.output, StartsWith("HIT key "));
  EXPECT_EQ(again, first);
  ASSERT_FALSE(first.empty());
  EXPECT_TRUE(again == RealNvrtcCubin()) << "not the real NVRTC's cubin";

  // Elsewhere the program's relative -I means another directory: not
  // this memo.
  auto elsewhere = FrontAlone(&again, "front");
  EXPECT_EQ(elsewhere.exit_code, 3) << elsewhere.output;
  EXPECT_THAT(elsewhere.output, HasSubstr("cannot run"));

  // Each change: the front end refuses; the full client compiles the new
  // program; once settled, the front end serves the new bytes.
  const std::vector<std::pair<std::string, std::function<void()>>> changes = {
      {"a same-size rewrite of a header",
       [&] { Write("src/inc/h.cuh", "#define SCALE 3.0f\n"); }},
      {"a header created where the scan found none (beside the program)",
       [&] { Write("src/h.cuh", "#define SCALE 5.0f\n"); }},
      {"a header created in a directory searched before the one used",
       [&] { Write("src/first/g.cuh", "#define OFFSET 7.0f\n"); }},
  };
  std::string before = first;
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    change();
    std::string stale, fresh, served;
    auto refused = FrontAlone(&stale);
    EXPECT_EQ(refused.exit_code, 3) << refused.output;
    EXPECT_THAT(refused.output, HasSubstr("cannot run"));
    auto full = Full(&fresh);
    ASSERT_EQ(full.exit_code, 0) << full.output;
    EXPECT_NE(fresh, before);
    LetChangesSettle();
    Full(&fresh);  // keeps a memo now that the change is settled
    auto served_hit = FrontAlone(&served);
    EXPECT_EQ(served_hit.exit_code, 0) << served_hit.output;
    EXPECT_EQ(served, fresh);
    EXPECT_TRUE(served == RealNvrtcCubin()) << "not the real NVRTC's cubin";
    before = fresh;
  }

  // Writing the output next to the program does not cost the memo.
  std::string other;
  EXPECT_EQ(FrontAlone(&other).exit_code, 0);
  EXPECT_EQ(FrontAlone(&other).exit_code, 0);

  // A memo of another toolkit (the daemon was upgraded): the scan followed
  // that toolkit's headers, so it is not this compile's.
  for (const auto& entry :
       std::filesystem::directory_iterator(dir_.Sub("scans/direct"))) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::string changed;
    if (std::optional<cli::DirectMemo> memo = cli::DecodeDirectMemo(bytes)) {
      memo->toolkit_fingerprint[0] ^= 1;
      changed = cli::EncodeDirectMemo(*memo);
    } else {
      std::optional<cli::MovableDirectMemo> movable =
          cli::DecodeMovableDirectMemo(bytes);
      ASSERT_TRUE(movable.has_value());
      movable->toolkit_fingerprint[0] ^= 1;
      changed = cli::EncodeMovableDirectMemo(*movable);
    }
    std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << changed;
  }
  auto other_toolkit = FrontAlone(&other);
  EXPECT_EQ(other_toolkit.exit_code, 3) << other_toolkit.output;
  EXPECT_THAT(other_toolkit.output, HasSubstr("cannot run"));

  // A damaged memo is no memo.
  for (const auto& entry :
       std::filesystem::directory_iterator(dir_.Sub("scans/direct"))) {
    std::filesystem::resize_file(entry.path(), 40);
  }
  auto damaged = FrontAlone(&other);
  EXPECT_EQ(damaged.exit_code, 3) << damaged.output;
  EXPECT_THAT(damaged.output, HasSubstr("cannot run"));
}

// A code generator writes its program and compiles it at once, every run:
// its files are never as old as a stamp must be to be trusted (2 s). The
// front end still serves the hit, by the files' bytes, and refuses once
// they differ; the answer is the real NVRTC's.
TEST_F(FrontEndMemoTest, AProgramWrittenJustNowIsServedByItsBytes) {
  std::string first, again;
  auto miss = Full(&first);  // every file written moments ago
  ASSERT_EQ(miss.exit_code, 0) << miss.output;
  ASSERT_THAT(miss.output, StartsWith("MISS key "));
  // While its place proof runs, a request joins it, which the front end
  // leaves to the full client (absent here): wait for the final key.
  ASSERT_TRUE(testing::ProofsSettled(dir_.Sub("s.sock")));
  for (int run = 0; run < 2; ++run) {
    Write("src/k.cu", kProgram);  // written again: a new stamp, young
    auto hit = FrontAlone(&again);
    ASSERT_EQ(hit.exit_code, 0) << hit.output;
    EXPECT_THAT(hit.output, StartsWith("HIT key "));
    EXPECT_EQ(again, first);
  }
  EXPECT_TRUE(again == RealNvrtcCubin()) << "not the real NVRTC's cubin";
  // Other bytes, at once: refused; the full client compiles them, and the
  // front end then serves those.
  Write("src/inc/h.cuh", "#define SCALE 3.0f\n");
  auto refused = FrontAlone(&again);
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  std::string changed, served;
  auto full = Full(&changed);
  ASSERT_EQ(full.exit_code, 0) << full.output;
  EXPECT_NE(changed, first);
  ASSERT_TRUE(testing::ProofsSettled(dir_.Sub("s.sock")));
  auto served_hit = FrontAlone(&served);
  EXPECT_EQ(served_hit.exit_code, 0) << served_hit.output;
  EXPECT_EQ(served, changed);
  EXPECT_TRUE(served == RealNvrtcCubin()) << "not the real NVRTC's cubin";
}

// A second checkout of the same files (another working directory): the
// front end alone serves the command there from the memo kept without its
// place, with no scan, and its answer is the real NVRTC's in that place;
// a checkout whose files differ in bytes or where a header shadows one
// found before is refused.
TEST_F(FrontEndMemoTest, ServesANewWorkingDirectoryWithTheSameFiles) {
  for (const char* place : {"copy", "other-bytes", "shadowed"}) {
    std::filesystem::copy(dir_.Sub("src"), dir_.Sub(place),
                          std::filesystem::copy_options::recursive);
  }
  LetChangesSettle();
  Write("other-bytes/inc/h.cuh", "#define SCALE 9.0f\n");  // the same size
  Write("shadowed/first/g.cuh", "#define OFFSET 1.0f\n");  // the same bytes
  std::string first, moved;
  auto miss = Full(&first);
  ASSERT_EQ(miss.exit_code, 0) << miss.output;
  ASSERT_THAT(miss.output, StartsWith("MISS key "));
  // Another place's request is a hit once the daemon has proven that the
  // answer does not depend on the place (until then it would wait for the
  // proof through jitcache-full, which the front end alone has not).
  ASSERT_TRUE(testing::ProofsSettled(dir_.Sub("s.sock")));
  const size_t memos = DirectMemos();

  auto hit = FrontAloneIn("copy", &moved);
  ASSERT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_THAT(hit.output, StartsWith("HIT key "));
  ASSERT_FALSE(moved.empty());
  EXPECT_TRUE(moved == RealNvrtcCubin("copy")) << "not the real NVRTC's cubin";
  // It kept the new place's own memo, and serves from it next time.
  EXPECT_EQ(DirectMemos(), memos + 1);
  std::string again;
  auto second = FrontAloneIn("copy", &again);
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(again, moved);

  for (const char* place : {"other-bytes", "shadowed"}) {
    SCOPED_TRACE(place);
    std::string refused_object;
    auto refused = FrontAloneIn(place, &refused_object);
    EXPECT_EQ(refused.exit_code, 3) << refused.output;
    EXPECT_THAT(refused.output, HasSubstr("cannot run"));
  }
}

// The command as typed names the first checkout (-I with an absolute path
// into it): from a second checkout it still reads the first one's headers,
// so no memo kept without its place may answer it there.
TEST_F(FrontEndMemoTest, AnAbsoluteIncludeDirectoryIntoThePlaceDoesNotMove) {
  std::filesystem::copy(dir_.Sub("src"), dir_.Sub("copy"),
                        std::filesystem::copy_options::recursive);
  LetChangesSettle();
  auto run = [&](const std::string& cli, const std::string& place) {
    return CompileIn(cli, place, {"-I" + dir_.Sub("src/inc"), "-Ifirst"});
  };
  auto miss = run(testing::CliBinary(), "src");
  ASSERT_EQ(miss.exit_code, 0) << miss.output;
  auto here = run(dir_.Sub("front/jitcache"), "src");
  EXPECT_EQ(here.exit_code, 0) << here.output;
  auto there = run(dir_.Sub("front/jitcache"), "copy");
  EXPECT_EQ(there.exit_code, 3) << there.output;
  EXPECT_THAT(there.output, HasSubstr("cannot run"));
}

// A relative -I that is a symbolic link to the toolkit's headers in the
// first checkout and a directory of its own in the second: there the real
// NVRTC reads the second's header (here one that fails), so the first's
// answer must not be served there from a memo kept without its place.
TEST_F(FrontEndMemoTest, ARelativeIncludeDirectoryThroughALinkDoesNotMove) {
  const std::string toolkit_include =
      std::string(getenv("CUDA_HOME") ? getenv("CUDA_HOME")
                                      : "/usr/local/cuda") +
      "/include";
  for (const char* place : {"one", "two"}) {
    std::filesystem::create_directories(dir_.Sub(place));
    Write(std::string(place) + "/k.cu",
          "#include <cuda_fp16.h>\n"
          "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }\n");
  }
  std::filesystem::create_directory_symlink(toolkit_include,
                                            dir_.Sub("one/cuda"));
  std::filesystem::create_directories(dir_.Sub("two/cuda"));
  Write("two/cuda/cuda_fp16.h", "#error not the toolkit's header\n");
  LetChangesSettle();
  auto run = [&](const std::string& cli, const std::string& place) {
    return CompileIn(cli, place, {"-Icuda"});
  };
  auto miss = run(testing::CliBinary(), "one");
  ASSERT_EQ(miss.exit_code, 0) << miss.output;
  auto here = run(dir_.Sub("front/jitcache"), "one");
  EXPECT_EQ(here.exit_code, 0) << here.output;
  auto there = run(dir_.Sub("front/jitcache"), "two");
  EXPECT_EQ(there.exit_code, 3) << there.output;
  EXPECT_THAT(there.output, HasSubstr("cannot run"));
  // And the full client there gives the real NVRTC's answer: the error.
  auto full = run(testing::CliBinary(), "two");
  EXPECT_NE(full.exit_code, 0) << full.output;
  EXPECT_THAT(full.output, HasSubstr("not the toolkit's header"));
}

// Reads an answer's head (status byte and length) from `s`; a descriptor
// that came with it goes to `*fd` (-1: none).
bool ReadHead(int s, char (&head)[5], int* fd) {
  iovec part{head, sizeof(head)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  const ssize_t n = recvmsg(s, &message, MSG_WAITALL);
  *fd = -1;
  if (cmsghdr* c = CMSG_FIRSTHDR(&message);
      c != nullptr && c->cmsg_type == SCM_RIGHTS) {
    std::memcpy(fd, CMSG_DATA(c), sizeof(int));
  }
  return n == static_cast<ssize_t>(sizeof(head));
}

// Sends `payload` framed on a new connection and reads the answer's head,
// which must have an empty frame; its status to `*status`, a descriptor
// that came with it to `*fd`.
bool AskForFile(const std::string& path, const std::string& payload,
                char* status, int* fd) {
  const int s = Connect(path);
  if (s < 0 || !frame::Write(s, payload)) return false;
  char head[5];
  const bool read = ReadHead(s, head, fd);
  close(s);
  *status = head[0];
  return read && frame::LengthOf(head + 1) == 0;
}

// A large hit asked with kCompileShared comes as a sealed memory file. A
// client that holds its descriptor can neither write, shrink, grow nor
// unseal it, nor map it writable, so what every other client (and the
// framed socket's own copy) gets stays the same bytes; one that asks and
// goes away leaves the daemon serving.
TEST(FramedSocket, ASharedAnswerCannotBeChangedByWhoeverHoldsIt) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"),
                                ":memory:", {"--shared_answer_size=1"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  compile_wire::Request request;
  request.source = kernels::kSaxpy;
  request.program_name = "saxpy.cu";
  request.options = {"-arch=sm_90"};
  request.target = wire::Target::kCubin;
  const std::string asked = compile_wire::Encode(request);
  FramedChannel channel(dir.Sub("s.sock"));
  std::string buffer;
  std::optional<std::string_view> miss = channel.Ask(
      framed_protocol::kCompile + asked, buffer, std::chrono::minutes(5));
  ASSERT_TRUE(miss.has_value());
  std::optional<compile_wire::Response> built = compile_wire::Decode(*miss);
  ASSERT_TRUE(built.has_value());
  ASSERT_EQ(built->outcome, 1) << built->log;

  char status = 0;
  int fd = -1;
  ASSERT_TRUE(AskForFile(dir.Sub("s.sock.hit"),
                         framed_protocol::kCompileShared + asked, &status,
                         &fd));
  ASSERT_EQ(status, 3);
  ASSERT_GE(fd, 0);
  const int seals = fcntl(fd, F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_NE(ftruncate(fd, 0), 0);
  EXPECT_NE(ftruncate(fd, 1 << 20), 0);
  EXPECT_NE(pwrite(fd, "x", 1, 0), 1);
  EXPECT_NE(write(fd, "x", 1), 1);
  EXPECT_EQ(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
            MAP_FAILED);
  EXPECT_NE(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), 0);
  // A private writable mapping is the holder's own copy.
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  void* own =
      mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ASSERT_NE(own, MAP_FAILED);
  std::memset(own, 0, st.st_size);
  munmap(own, st.st_size);
  std::string content(st.st_size, '\0');
  ASSERT_EQ(pread(fd, content.data(), content.size(), 0), st.st_size);
  close(fd);
  std::optional<compile_wire::Response> in_file = compile_wire::Decode(content);
  ASSERT_TRUE(in_file.has_value());
  EXPECT_EQ(in_file->object, built->object);

  // A client that asks and goes away before reading.
  const int gone = Connect(dir.Sub("s.sock.hit"));
  ASSERT_TRUE(frame::Write(gone, framed_protocol::kCompileShared + asked));
  close(gone);

  // Everyone else still gets the very bytes, shared or through the socket.
  MappedAnswer mapped;
  std::optional<std::string_view> shared =
      channel.Ask(framed_protocol::kCompileShared + asked, buffer,
                  std::chrono::seconds(30), nullptr, &mapped);
  ASSERT_TRUE(shared.has_value());
  ASSERT_FALSE(mapped.empty());
  EXPECT_EQ(compile_wire::Decode(*shared)->object, built->object);
  std::optional<std::string_view> copied = channel.Ask(
      framed_protocol::kCompile + asked, buffer, std::chrono::seconds(30));
  ASSERT_TRUE(copied.has_value());
  EXPECT_EQ(compile_wire::Decode(*copied)->object, built->object);
  // A peer that asks again and again and reads nothing holds one
  // descriptor in flight: the rest of its answers come as bytes.
  const int greedy = Connect(dir.Sub("s.sock.hit"));
  ASSERT_GE(greedy, 0);
  constexpr int kAsks = 20;
  for (int i = 0; i < kAsks; ++i) {
    ASSERT_TRUE(frame::Write(greedy, framed_protocol::kCompileShared + asked));
  }
  absl::SleepFor(absl::Milliseconds(500));
  int files = 0, inline_answers = 0;
  for (int i = 0; i < kAsks; ++i) {
    char head[5];
    int passed = -1;
    ASSERT_TRUE(ReadHead(greedy, head, &passed));
    if (passed >= 0) {
      close(passed);
      ++files;
    }
    if (head[0] == 3) continue;
    ASSERT_EQ(head[0], 0);
    ++inline_answers;
    std::string body(frame::LengthOf(head + 1), '\0');
    ASSERT_EQ(recv(greedy, body.data(), body.size(), MSG_WAITALL),
              static_cast<ssize_t>(body.size()));
    EXPECT_EQ(compile_wire::Decode(body)->object, built->object);
  }
  close(greedy);
  EXPECT_EQ(files, 1);
  EXPECT_EQ(inline_answers, kAsks - 1);

  const DaemonStats stats = testing::StatsOf(daemon.socket());
  EXPECT_GE(stats.shared_answers, 3u);
  EXPECT_GT(stats.shared_answer_bytes, built->object.size());
}

TEST(FramedSocket, WithoutItTheFrontEndUsesGrpc) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"), dir.Sub("store"),
                                {"--hit_socket=false"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  std::ofstream(dir.Sub("saxpy.cu")) << kernels::kSaxpy;
  const std::vector<std::string> args = {
      testing::CliBinary(), "--socket", dir.Sub("s.sock"), "compile",
      dir.Sub("saxpy.cu"),  "-o",       dir.Sub("out.ptx")};
  testing::RunProcess(args);
  auto hit = testing::RunProcess(args);
  EXPECT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_THAT(hit.output, StartsWith("HIT key "));
}

TEST(FramedSocket, ASocketPathWithNoRoomForTheSuffixStillServes) {
  testing::TempDir dir;
  // 107 bytes: the longest a Unix socket allows, so SOCKET.hit cannot exist.
  const std::string socket =
      dir.Sub(std::string(107 - dir.path().size() - 1, 's'));
  ASSERT_EQ(socket.size(), 107u);
  testing::DaemonProcess daemon(socket, dir.Sub("store"));
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  EXPECT_THAT(daemon.Log(), HasSubstr("no framed socket"));
  std::ofstream(dir.Sub("saxpy.cu")) << kernels::kSaxpy;
  const std::vector<std::string> args = {testing::CliBinary(),
                                         "--socket",
                                         socket,
                                         "compile",
                                         dir.Sub("saxpy.cu"),
                                         "-o",
                                         dir.Sub("out.ptx")};
  testing::RunProcess(args);
  auto hit = testing::RunProcess(args);
  EXPECT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_THAT(hit.output, StartsWith("HIT key "));
}

}  // namespace
}  // namespace jitcache
