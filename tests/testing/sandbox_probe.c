/* Registered as a daemon's ptxas (--ptxas) in a test: run by a compile
 * worker as ptxas is, it reports on stderr what its sandbox lets it do,
 * and writes its output file (the last argument) so that the run is an
 * answer like any other. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char* Outcome(long r) { return r < 0 ? strerrorname_np(errno) : "allowed"; }

int main(int argc, char** argv) {
  char* const args[] = {"ptxas", "--version", NULL};
  char* const env[] = {NULL};
  fprintf(stderr, "execve: %s\n",
          Outcome(execve("/usr/local/cuda/bin/ptxas", args, env)));
  fprintf(stderr, "execveat by path: %s\n",
          Outcome(syscall(SYS_execveat, AT_FDCWD, "/usr/local/cuda/bin/ptxas",
                          args, env, 0)));
  fprintf(stderr, "socket: %s\n", Outcome(socket(AF_UNIX, SOCK_STREAM, 0)));
  fprintf(stderr, "open /etc/passwd: %s\n",
          Outcome(open("/etc/passwd", O_RDONLY)));
  fprintf(stderr, "write into the toolkit: %s\n",
          Outcome(open("/usr/local/cuda/bin/probe-write",
                       O_WRONLY | O_CREAT | O_TRUNC, 0644)));
  fprintf(stderr, "open the worker's socket: %s\n",
          Outcome(fcntl(3, F_GETFD)));
  const int out = open(argv[argc - 1], O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (out < 0) return 2;
  if (write(out, "probed\n", 7) != 7) return 3;
  return close(out) == 0 ? 0 : 4;
}
