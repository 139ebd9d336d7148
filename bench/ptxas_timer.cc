// ptxas-timer: runs the real ptxas named by $PTXAS_TIMER_REAL with this
// process's arguments (argv[0] too: ptxas names itself after it) and
// appends "wall_ms user_ms sys_ms exit" for it to $PTXAS_TIMER_LOG. For the
// benchmarks' "without jitcache" runs: Triton names it as its ptxas
// (TRITON_PTXAS_PATH), so the CPU ptxas takes can be summed.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  (void)argc;
  const char* real = std::getenv("PTXAS_TIMER_REAL");
  if (real == nullptr || *real == '\0') {
    std::fprintf(stderr, "ptxas-timer: set PTXAS_TIMER_REAL\n");
    return 255;
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    execv(real, argv);
    std::fprintf(stderr, "ptxas-timer: %s: %s\n", real, std::strerror(errno));
    _exit(255);
  }
  int status = 0;
  rusage usage{};
  if (child < 0 || wait4(child, &status, 0, &usage) != child) return 255;
  const double wall = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
  if (const char* log = std::getenv("PTXAS_TIMER_LOG"); log && *log) {
    const std::string line =
        std::to_string(wall) + " " + std::to_string(ms(usage.ru_utime)) + " " +
        std::to_string(ms(usage.ru_stime)) + " " + std::to_string(code) + "\n";
    const int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      if (write(fd, line.data(), line.size()) < 0) {
        // A lost line is a lost sample, not a failed compile.
      }
      close(fd);
    }
  }
  return code;
}
