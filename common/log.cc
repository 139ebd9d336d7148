#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstring>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace jitcache {
namespace {
std::atomic<int> min_level{static_cast<int>(LogLevel::kInfo)};
constexpr char kLevelLetters[] = {'I', 'W', 'E'};
}  // namespace

void SetMinLogLevel(LogLevel level) {
  min_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

LogMessage::LogMessage(LogLevel level, const char* file, int line)
    : level_(level) {
  const char* base = std::strrchr(file, '/');
  stream_ << kLevelLetters[static_cast<int>(level)]
          << absl::FormatTime("%Y-%m-%d %H:%M:%E3S ", absl::Now(),
                              absl::LocalTimeZone())
          << (base != nullptr ? base + 1 : file) << ":" << line << "] ";
}

LogMessage::~LogMessage() {
  if (static_cast<int>(level_) < min_level.load(std::memory_order_relaxed)) {
    return;
  }
  stream_ << '\n';
  const std::string text = stream_.str();
  // One write(2) per line: atomic with respect to other lines.
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace jitcache
