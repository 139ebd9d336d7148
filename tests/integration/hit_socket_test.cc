// The daemon's hit socket and the `jitcache` front end that uses it.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_fixture.h"
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

class HitSocketTest : public testing::DaemonFixture {
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

TEST_F(HitSocketTest, HostileRequestsAreAnsweredAskGrpcAndTheDaemonStaysUp) {
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

TEST_F(HitSocketTest, TheFrontEndServesHitsAndHandsTheRestToTheFullClient) {
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

TEST(HitSocket, WithoutItTheFrontEndUsesGrpc) {
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

TEST(HitSocket, ASocketPathWithNoRoomForTheSuffixStillServes) {
  testing::TempDir dir;
  // 107 bytes: the longest a Unix socket allows, so SOCKET.hit cannot exist.
  const std::string socket =
      dir.Sub(std::string(107 - dir.path().size() - 1, 's'));
  ASSERT_EQ(socket.size(), 107u);
  testing::DaemonProcess daemon(socket, dir.Sub("store"));
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  EXPECT_THAT(daemon.Log(), HasSubstr("no hit socket"));
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
