#include "common/hit_client.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "common/fd_io.h"
#include "common/length_frame.h"

namespace jitcache {

std::optional<std::string> AskHitSocket(const std::string& socket,
                                        const std::string& request) {
  const std::string path = socket + ".hit";
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return std::nullopt;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  // A daemon too busy to answer within this is asked over gRPC instead.
  const timeval timeout{0, 500 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::optional<std::string> answer;
  char status = 1;  // 0: a hit follows, framed; 1: ask over gRPC
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) ==
          0 &&
      frame::Write(fd, request) && ReadFully(fd, &status, 1) && status == 0) {
    answer = frame::Read(fd, frame::kMaxPayloadBytes);
  }
  close(fd);
  return answer;
}

}  // namespace jitcache
