#include "common/log.h"

#include <unistd.h>

#include <cstring>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace jitcache {
namespace {
constexpr char kLevelLetters[] = {'I', 'W', 'E'};
}  // namespace

LogMessage::LogMessage(LogLevel level, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  stream_ << kLevelLetters[static_cast<int>(level)]
          << absl::FormatTime("%Y-%m-%d %H:%M:%E3S ", absl::Now(),
                              absl::LocalTimeZone())
          << (base != nullptr ? base + 1 : file) << ":" << line << "] ";
}

LogMessage::~LogMessage() {
  stream_ << '\n';
  const std::string text = stream_.str();
  // One write(2) per line: atomic with respect to other lines.
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace jitcache
