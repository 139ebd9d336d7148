#ifndef JITCACHE_CLIENT_CLI_PROGRESS_BAR_H_
#define JITCACHE_CLIENT_CLI_PROGRESS_BAR_H_

#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <string>

namespace jitcache::cli {

// "[#####.....] 12/40 label" on stderr: redrawn in place on a terminal, one
// line per tenth of the work otherwise (so logs stay short).
class ProgressBar {
 public:
  explicit ProgressBar(std::string label)
      : label_(std::move(label)), tty_(isatty(STDERR_FILENO) != 0) {}
  ~ProgressBar() {
    if (tty_ && drawn_) std::cerr << "\n";
  }

  void Update(uint64_t done, uint64_t total) {
    constexpr int kWidth = 30;
    const int tenth = total == 0 ? 0 : static_cast<int>(10 * done / total);
    if (!tty_ && tenth == last_tenth_ && done != total) return;
    last_tenth_ = tenth;
    const int filled =
        total == 0 ? 0
                   : static_cast<int>(kWidth * std::min(done, total) / total);
    std::cerr << (tty_ ? "\r" : "") << "[" << std::string(filled, '#')
              << std::string(kWidth - filled, '.') << "] " << done << "/"
              << total << " " << label_ << (tty_ ? "" : "\n") << std::flush;
    drawn_ = true;
  }

 private:
  const std::string label_;
  const bool tty_;
  int last_tenth_ = -1;
  bool drawn_ = false;
};

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_PROGRESS_BAR_H_
