// jitcache: the command-line client of jitcached.
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "jitcache/client.h"
#include "jitcache/linker.h"

namespace {

constexpr char kUsage[] = R"(usage: jitcache [--socket PATH] COMMAND [ARGS]

Commands:
  compile FILE.cu [flags] [NVRTC options]
      Compile FILE.cu through jitcached and write the object.
        --arch ARCH            target architecture, e.g. sm_90 (same as -arch=ARCH)
        --target KIND          ptx (default), cubin or ltoir
        --name-expression EXPR ask for the lowered name of EXPR, e.g.
                               'my_kernel<float>' (repeatable)
        --header NAME=FILE     serve FILE to #include "NAME" (repeatable)
        --program-name NAME    name of the program in diagnostics (default: FILE's name)
        -o OUT                 output file (default: FILE with .ptx/.cubin/.ltoir)
      Any other argument starting with '-' is passed to NVRTC as an option
      (-D, -U, -std=, -rdc=true, -lineinfo, ...); the daemon checks it.
      Prints how the request was served (HIT, MISS or JOINED), the cache key,
      the compile time and the lowered names. Exit status 1 when the program
      does not compile (the log goes to stderr).
  link FILE... [flags] [nvJitLink options]
      Link objects through jitcached (cached like compiles). Each FILE's kind
      comes from its extension: .ltoir, .ptx, .cubin, .fatbin, .o, .a.
        --arch ARCH            target architecture, e.g. sm_90 (required)
        --target KIND          cubin (default) or ptx
        -o OUT                 output file (default: a.cubin or a.ptx)
      Other arguments starting with '-' go to nvJitLink (-O3, -ftz=true,
      -kernels-used=NAME, ...); LTO-IR inputs imply -lto. Only files the
      daemon does not have yet are uploaded. Exit status 1 when the inputs do
      not link (the log goes to stderr).
  ping
      Show the daemon's version, toolchain and store.
  stats
      Show the daemon's counters: requests, hits, misses, joins, compile
      errors, rejections by reason, queue, compile seconds spent and saved,
      store entries and bytes.

Global flags:
  --socket PATH   daemon socket (default: $JITCACHE_SOCKET, else
                  $XDG_RUNTIME_DIR/jitcache.sock, else /tmp/jitcache-$UID.sock)
  --help          this text

Exit status: 0 success, 1 compile error, 2 usage error, 3 daemon or I/O error.
)";

constexpr int kExitCompileError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitFailure = 3;

int UsageError(absl::string_view message) {
  std::cerr << "jitcache: " << message << "\n(see jitcache --help)\n";
  return kExitUsage;
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Takes the value of `flag` from "--flag=V" or "--flag V".
bool TakeValue(const std::vector<std::string>& args, size_t& i,
               absl::string_view flag, std::string* value) {
  const std::string& arg = args[i];
  if (arg == flag) {
    if (i + 1 >= args.size()) return false;
    *value = args[++i];
    return true;
  }
  if (absl::StartsWith(arg, absl::StrCat(flag, "="))) {
    *value = arg.substr(flag.size() + 1);
    return true;
  }
  return false;
}

int Ping(const jitcache::Client& client) {
  absl::StatusOr<jitcache::DaemonInfo> info = client.Ping();
  if (!info.ok()) {
    std::cerr << "jitcache: " << info.status().message() << "\n";
    return kExitFailure;
  }
  std::cout << "jitcached " << info->daemon_version << " on "
            << client.socket_path() << "\n"
            << "toolchain:   " << info->toolchain << "\n"
            << "fingerprint: " << info->toolchain_fingerprint << "\n"
            << "key schema:  " << info->key_schema_version << "\n"
            << "store:       " << info->store_path << "\n"
            << "archs:      ";
  for (const auto& a : info->supported_archs) std::cout << " " << a;
  std::cout << "\n";
  return 0;
}

int Stats(const jitcache::Client& client) {
  absl::StatusOr<jitcache::DaemonStats> s = client.Stats();
  if (!s.ok()) {
    std::cerr << "jitcache: " << s.status().message() << "\n";
    return kExitFailure;
  }
  // One "name value" line each: easy to read and to parse.
  std::cout << "requests " << s->requests << "\nhits " << s->hits << "\nmisses "
            << s->misses << "\njoins " << s->joins << "\ncompile_errors "
            << s->compile_errors << "\nbuilds_run " << s->compiles
            << "\nlink_requests " << s->link_requests << "\nlink_errors "
            << s->link_errors << "\nqueued " << s->queued << "\nrunning "
            << s->running << "\ncompile_seconds_spent "
            << s->compile_seconds_spent << "\ncompile_seconds_saved "
            << s->compile_seconds_saved << "\nstore_entries "
            << s->store_entries << "\nstore_bytes " << s->store_bytes
            << "\nstore_corrupt_removed " << s->store_corrupt_removed << "\n";
  for (const auto& [reason, count] : s->rejected) {
    std::cout << "rejected_" << reason << " " << count << "\n";
  }
  return 0;
}

// Writes an object, prints how it was served; shared by compile and link.
int Report(const jitcache::ObjectCode& code, const std::string& output,
           double total_ms, absl::string_view failure) {
  const std::string served(jitcache::ServedName(code.served));
  if (!code.compiled) {
    std::cout << absl::StrFormat("%s %s key %s compile %.1f ms total %.1f ms\n",
                                 served, failure, code.cache_key,
                                 code.compile_time_us / 1000.0, total_ms);
    std::cerr << code.log;
    return kExitCompileError;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(code.bytes.data(), static_cast<std::streamsize>(code.bytes.size()));
  out.close();
  if (!out) {
    std::cerr << "jitcache: cannot write " << output << "\n";
    return kExitFailure;
  }
  std::cout << absl::StrFormat(
      "%s key %s compile %.1f ms total %.1f ms -> %s (%d bytes)\n", served,
      code.cache_key, code.compile_time_us / 1000.0, total_ms, output,
      code.bytes.size());
  for (const auto& [expr, lowered] : code.symbol_mapping) {
    std::cout << "  " << expr << " -> " << lowered << "\n";
  }
  if (!code.log.empty()) std::cerr << code.log;
  return 0;
}

int Link(const jitcache::Client& client, const std::vector<std::string>& args) {
  jitcache::Linker linker(client);
  jitcache::LinkerOptions options;
  jitcache::CodeType target = jitcache::CodeType::kCubin;
  std::string output, value;
  int files = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (TakeValue(args, i, "--arch", &value)) {
      options.arch = value;
    } else if (TakeValue(args, i, "--target", &value)) {
      if (value == "cubin") {
        target = jitcache::CodeType::kCubin;
      } else if (value == "ptx") {
        target = jitcache::CodeType::kPtx;
      } else {
        return UsageError(
            absl::StrCat("a link makes cubin or ptx, not '", value, "'"));
      }
    } else if (TakeValue(args, i, "-o", &value)) {
      output = value;
    } else if (absl::StartsWith(arg, "-")) {
      options.extra_options.push_back(arg);
    } else {
      if (absl::Status s = linker.AddFile(arg); !s.ok()) {
        std::cerr << "jitcache: " << s.message() << "\n";
        return absl::IsInvalidArgument(s) ? kExitUsage : kExitFailure;
      }
      ++files;
    }
  }
  if (files == 0) return UsageError("link needs at least one input file");
  if (output.empty()) {
    output = absl::StrCat("a.", jitcache::CodeTypeName(target));
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<jitcache::ObjectCode> code = linker.Link(options, target);
  const double total_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  if (!code.ok()) {
    std::cerr << "jitcache: " << code.status() << "\n";
    return kExitFailure;
  }
  return Report(*code, output, total_ms, "LINK_ERROR");
}

int Compile(const jitcache::Client& client,
            const std::vector<std::string>& args) {
  std::string file, output, program_name, value;
  jitcache::CodeType target = jitcache::CodeType::kPtx;
  jitcache::ProgramOptions options;
  std::vector<std::pair<std::string, std::string>> headers;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (TakeValue(args, i, "--arch", &value)) {
      options.arch = value;
    } else if (TakeValue(args, i, "--target", &value)) {
      if (value == "ptx") {
        target = jitcache::CodeType::kPtx;
      } else if (value == "cubin") {
        target = jitcache::CodeType::kCubin;
      } else if (value == "ltoir") {
        target = jitcache::CodeType::kLtoir;
      } else {
        return UsageError(
            absl::StrCat("unknown target '", value, "' (ptx, cubin or ltoir)"));
      }
    } else if (TakeValue(args, i, "--name-expression", &value)) {
      options.name_expressions.push_back(value);
    } else if (TakeValue(args, i, "--header", &value)) {
      const size_t eq = value.find('=');
      if (eq == std::string::npos) {
        return UsageError("--header takes NAME=FILE");
      }
      std::optional<std::string> contents = ReadFile(value.substr(eq + 1));
      if (!contents) {
        std::cerr << "jitcache: cannot read " << value.substr(eq + 1) << "\n";
        return kExitFailure;
      }
      headers.emplace_back(value.substr(0, eq), *std::move(contents));
    } else if (TakeValue(args, i, "--program-name", &value)) {
      program_name = value;
    } else if (TakeValue(args, i, "-o", &value)) {
      output = value;
    } else if (file.empty() && !absl::StartsWith(arg, "-")) {
      file = arg;
    } else {
      options.extra_options.push_back(arg);
    }
  }
  if (file.empty()) return UsageError("compile needs a FILE.cu");
  std::optional<std::string> source = ReadFile(file);
  if (!source) {
    std::cerr << "jitcache: cannot read " << file << "\n";
    return kExitFailure;
  }
  if (program_name.empty()) {
    program_name = file.substr(file.find_last_of('/') + 1);
  }
  if (output.empty()) {
    const size_t dot = file.find_last_of('.');
    output = absl::StrCat(dot == std::string::npos ? file : file.substr(0, dot),
                          ".", jitcache::CodeTypeName(target));
  }
  jitcache::Program program(*std::move(source), program_name);
  for (auto& [name, contents] : headers) {
    program.AddHeader(std::move(name), std::move(contents));
  }

  const absl::Time start = absl::Now();
  absl::StatusOr<jitcache::ObjectCode> code =
      client.Compile(program, options, target);
  const double total_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  if (!code.ok()) {
    std::cerr << "jitcache: " << code.status() << "\n";
    return kExitFailure;
  }
  return Report(*code, output, total_ms, "COMPILE_ERROR");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  jitcache::ClientOptions options;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string value;
    if (args[i] == "--help" || args[i] == "-h" || args[i] == "help") {
      std::cout << kUsage;
      return 0;
    }
    if (TakeValue(args, i, "--socket", &value)) {
      options.socket_path = value;
      continue;
    }
    break;
  }
  if (i >= args.size()) return UsageError("no command given");
  const std::string command = args[i];
  const std::vector<std::string> rest(args.begin() + i + 1, args.end());
  absl::StatusOr<jitcache::Client> client = jitcache::Client::Connect(options);
  if (!client.ok()) {
    std::cerr << "jitcache: " << client.status().message() << "\n";
    return kExitFailure;
  }
  if (command == "ping") return Ping(*client);
  if (command == "stats") return Stats(*client);
  if (command == "compile") return Compile(*client, rest);
  if (command == "link") return Link(*client, rest);
  return UsageError(absl::StrCat("unknown command '", command, "'"));
}
