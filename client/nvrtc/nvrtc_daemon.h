#ifndef JITCACHE_CLIENT_NVRTC_NVRTC_DAEMON_H_
#define JITCACHE_CLIENT_NVRTC_NVRTC_DAEMON_H_

// The node's daemon as libnvrtc.so.13 asks it: over the framed socket
// (kCompileShared), with hand-written messages (client/wire/compile_wire.h) and
// the plain C++ include scan, so that a process that preloads the library
// loads nothing but the C and C++ runtimes. A hit is one round trip; a miss
// is the same request, answered when its compile (or the one it joins) is
// done.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/include_scan/included_files.h"
#include "client/wire/compile_wire.h"
#include "client/wire/framed_channel.h"
#include "client/wire/wire_values.h"

namespace jitcache::nvrtc {

// One compile as the caller's NVRTC calls made it (views: the caller keeps
// the program alive during Compile).
struct CompileCall {
  std::string_view source;
  std::string_view name;  // never empty: NVRTC's default_program otherwise
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  std::span<const std::string> options;  // as spelled
  std::span<const std::string> name_expressions;
  int target = jitcache::wire::Target::kPtx;
};

// What the daemon said to one compile.
struct Answer {
  Answer() = default;
  Answer(Answer&&) = default;
  Answer& operator=(Answer&&) = default;
  ~Answer();  // gives `buffer` back, unless it was taken

  // Answered: a compile's result (compiled or not) from a hit, a build or
  // a join, viewed in `buffer` (the bytes as read from the socket: the
  // object is never copied before the caller's nvrtcGetCUBIN). Otherwise
  // `why` says why the real NVRTC must compile it, and `refusal` holds the
  // daemon's code and message when it refused.
  bool answered = false;
  std::string buffer;  // from TakeBuffer; give it back with GiveBuffer
  // A large hit the daemon handed over as a sealed memory file: `response`
  // views it here instead of `buffer` (no copy through the socket).
  MappedAnswer mapped;
  compile_wire::ResponseView response;
  FramedChannel::Refusal refusal;
  std::string why;
};

// Answer buffers are reused, so that a warm process's hits cost no
// allocation (and no page faults) for objects of any size: a program takes
// one for each answer it keeps and gives it back when destroyed. At most a
// few (32 MiB in all, 16 MiB each at most) are kept. Thread-safe.
std::string TakeBuffer();
void GiveBuffer(std::string buffer);

// Thread-safety: Compile from any number of threads.
class Daemon {
 public:
  // The process's daemon, connected on first use: nullptr (the real NVRTC
  // compiles everything) when JITCACHE_NVRTC_DISABLE is set to anything
  // but "0", when no daemon answers on the framed socket, and when the
  // daemon's NVRTC is not the very file the real one would be opened from
  // here (its answers would then not be that library's). Says why on
  // stderr when JITCACHE_NVRTC_VERBOSE is set.
  static Daemon* ForProcess();

  Answer Compile(const CompileCall& call);

 private:
  explicit Daemon(std::string socket) : channel_(std::move(socket)) {}
  // The daemon, when it answers and compiles with the NVRTC this process
  // would open; nullptr saying `why` otherwise. Its first connection is
  // kept for the compiles.
  static Daemon* Connect(std::string* why);

  // Asks with `request` and reads the answer into `answer`.
  bool Ask(const compile_wire::Request& request, Answer& answer);

  FramedChannel channel_;
  internal::Toolkit toolkit_;  // set by Connect, then read only
};

// Whether JITCACHE_NVRTC_VERBOSE asks for lines on stderr.
bool Verbose();

}  // namespace jitcache::nvrtc

#endif  // JITCACHE_CLIENT_NVRTC_NVRTC_DAEMON_H_
