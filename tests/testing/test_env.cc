#include "tests/testing/test_env.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace jitcache::testing {

bool WaitFor(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::optional<std::string> FindProgram(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> dirs =
      absl::StrSplit(path != nullptr ? path : "", ':', absl::SkipEmpty());
  dirs.insert(dirs.end(), {"/usr/sbin", "/sbin", "/usr/bin", "/bin"});
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

absl::StatusOr<int> ListenOn(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError("socket path too long");
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  unlink(path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 512) != 0) {
    const int err = errno;
    close(fd);
    return absl::InternalError(
        absl::StrCat("listen on ", path, ": ", std::strerror(err)));
  }
  return fd;
}

absl::StatusOr<std::map<std::string, double>> ParsePrometheusText(
    const std::string& text) {
  static const std::regex kType(
      R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex kSample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (\S+)( -?[0-9]+)?)");
  std::set<std::string> declared;
  std::map<std::string, double> samples;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (line.empty()) continue;
    std::smatch m;
    const std::string l(line);
    if (absl::StartsWith(line, "# TYPE")) {
      if (!std::regex_match(l, m, kType)) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", number, ": bad TYPE line: ", l));
      }
      declared.insert(m[1]);
      continue;
    }
    if (absl::StartsWith(line, "#")) continue;  // HELP and comments
    if (!std::regex_match(l, m, kSample)) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": not a sample: ", l));
    }
    std::string name = m[1];
    absl::string_view base = name;
    for (absl::string_view suffix : {"_bucket", "_sum", "_count"}) {
      if (!declared.count(std::string(base)))
        absl::ConsumeSuffix(&base, suffix);
    }
    if (!declared.count(std::string(base))) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": ", name, " has no TYPE line"));
    }
    double value = 0;
    const std::string v = m[5];
    if (v == "+Inf") {
      value = HUGE_VAL;
    } else if (!absl::SimpleAtod(v, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": bad value ", v));
    }
    samples[name + m[2].str()] = value;
  }
  return samples;
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("connect to port ", port, ": ", std::strerror(err)));
  }
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  if (write(fd, request.data(), request.size()) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("write failed");
  }
  std::string response;
  char buffer[65536];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) response.append(buffer, n);
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (!absl::StartsWith(response, "HTTP/1.") || body == std::string::npos) {
    return absl::DataLossError(
        absl::StrCat("not an HTTP response: ", response.substr(0, 200)));
  }
  if (response.find(" 200 ") > response.find("\r\n")) {
    return absl::UnavailableError(response.substr(0, response.find("\r\n")));
  }
  return response.substr(body + 4);
}

}  // namespace jitcache::testing
