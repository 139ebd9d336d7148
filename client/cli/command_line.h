#ifndef JITCACHE_CLIENT_CLI_COMMAND_LINE_H_
#define JITCACHE_CLIENT_CLI_COMMAND_LINE_H_

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace jitcache::cli {

// One jitcache-full command line as its parser (CLI11) reads it: the global
// flags, the command, and that command's options, typed. Each command
// accepts only its own options (anything else is a usage error naming it),
// except compile and link, whose arguments are NVRTC's and nvJitLink's
// options as much as jitcache's: everything after the command is kept as
// given (`--` and all), for the parser compile shares with the `jitcache`
// front end (compile_flags.h; the two must read a line alike) and link's
// own. An option given twice takes its last value, as it always has.
struct CommandLine {
  std::string socket;   // --socket
  std::string command;  // empty: none given
  bool help = false;    // --help, global or the command's
  bool version = false;
  bool json = false;                     // ping, config, ls, show, stats
  bool zero = false;                     // stats
  std::vector<std::string> passthrough;  // compile, link
  // ls (as given: an empty --kind= or --limit= is a usage error there)
  std::string arch;
  std::optional<std::string> kind, sort, limit;
  // show (and export's -o)
  std::string key_prefix;
  bool ptx = false;
  std::string output;
  // export: --arch (comma lists, repeatable) and --key (repeatable)
  std::vector<std::string> archs, keys;
  // import FILE.jcb, precompile MANIFEST [--export FILE.jcb]
  std::string file;
  std::string export_path;
  // evict
  std::string to_size, older_than;
};

// The command line, or the exit status of a usage error (reported on
// stderr the way every jitcache usage error is).
std::variant<CommandLine, int> ParseCommandLine(int argc, char** argv);

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_COMMAND_LINE_H_
