#include "common/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace jitcache {
namespace {

constexpr char kLevelLetters[] = {'D', 'I', 'W', 'E'};
// syslog priorities: debug, info, warning, err.
constexpr int kPriorities[] = {7, 6, 4, 3};

std::atomic<int> min_level{static_cast<int>(LogLevel::kInfo)};

// systemd sets JOURNAL_STREAM=DEV:INODE for a stderr connected to the
// journal; it is inherited, so the check is that stderr is still that file.
bool StderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  return dev == st.st_dev && ino == st.st_ino;
}

}  // namespace

void SetLogLevel(LogLevel level) { min_level = static_cast<int>(level); }

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= min_level.load(std::memory_order_relaxed);
}

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warning") return LogLevel::kWarning;
  if (name == "error") return LogLevel::kError;
  return std::nullopt;
}

LogMessage::LogMessage(LogLevel level, const char* file, int line) {
  static const bool journal = StderrIsJournal();
  const int i = static_cast<int>(level);
  const char* base = std::strrchr(file, '/');
  if (journal) {
    stream_ << '<' << kPriorities[i] << '>';
  } else {
    stream_ << kLevelLetters[i]
            << absl::FormatTime("%Y-%m-%d %H:%M:%E3S ", absl::Now(),
                                absl::LocalTimeZone());
  }
  stream_ << (base != nullptr ? base + 1 : file) << ":" << line << "] ";
}

LogMessage::~LogMessage() {
  stream_ << '\n';
  const std::string text = stream_.str();
  // One write(2) per line: atomic with respect to other lines.
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace jitcache
