#ifndef JITCACHE_CLIENT_CLI_COMPILE_FLAGS_H_
#define JITCACHE_CLIENT_CLI_COMPILE_FLAGS_H_

// The `compile` command's flags and its result line, for both commands:
// the `jitcache` front end (which answers hits with nothing but libc and
// libstdc++ loaded, hence no Abseil here) and jitcache-full. Pure
// functions; any thread.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace jitcache::cli {

// Takes the value of `flag` from "--flag=V" or "--flag V".
bool TakeValue(const std::vector<std::string>& args, size_t& i,
               const std::string& flag, std::string* value);

// What one `compile` command line (or precompile manifest line) says, as
// spelled: paths are not resolved and files not read.
struct CompileFlags {
  std::string file;                // FILE.cu
  std::string output;              // -o; empty: DefaultOutput
  std::string target = "ptx";      // --target
  std::vector<std::string> archs;  // --arch, a comma list split
  std::vector<std::string> name_expressions;
  // --header NAME=FILE, in order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string program_name;                // --program-name; empty: FILE's name
  std::vector<std::string> nvrtc_options;  // every other "-..." argument
  // --wait-for-proof: answered once the key is final
  // (ProgramOptions::wait_for_proof).
  bool wait_for_proof = false;
};

// Parses `args`; false with `error` set for a usage error (a flag without
// its value, --header without '=', a target other than ptx, cubin, ltoir
// or optixir, no FILE).
bool ParseCompileFlags(const std::vector<std::string>& args,
                       CompileFlags* flags, std::string* error);

// FILE with its extension replaced by the target's name.
std::string DefaultOutput(const std::string& file, const std::string& target);

// What a compile prints on stdout: "SERVED key K compile C ms total T ms"
// then " -> OUT (N bytes)" and a "  EXPR -> LOWERED" line per name, or,
// when it did not compile, "SERVED FAILURE key ..." alone.
std::string ResultLines(const std::string& served, bool compiled,
                        const std::string& failure, const std::string& key,
                        double compile_ms, double total_ms,
                        const std::string& output, size_t bytes,
                        const std::map<std::string, std::string>& lowered);

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_COMPILE_FLAGS_H_
