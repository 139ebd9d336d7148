// jitcache: the command-line client of jitcached.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "client/api/asked_compile.h"
#include "client/cli/cli_args.h"
#include "client/cli/compile_flags.h"
#include "client/cli/direct_memo.h"
#include "client/cli/json_answers.h"
#include "client/cli/preload_line.h"
#include "client/cli/progress_bar.h"
#include "client/cli/store_commands.h"
#include "client/rpc/rpc_channel.h"
#include "client/wire/compile_wire.h"
#include "common/absl_view.h"
#include "common/compile_options.h"
#include "common/paths.h"
#include "common/plain_status_absl.h"
#include "common/private_file.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "jitcache/client.h"
#include "jitcache/linker.h"
#include "jitcache/v1/jitcache.pb.h"

namespace {

constexpr char kUsage[] = R"(usage: jitcache [--socket PATH] COMMAND [ARGS]

Commands:
  compile FILE.cu [flags] [NVRTC options]
      Compile FILE.cu through jitcached and write the object.
        --arch ARCH            target architecture, e.g. sm_90 (same as -arch=ARCH)
        --target KIND          ptx (default), cubin, ltoir or optixir
        --name-expression EXPR ask for the lowered name of EXPR, e.g.
                               'my_kernel<float>' (repeatable)
        --header NAME=FILE     serve FILE to #include "NAME" (repeatable)
        --program-name NAME    name of the program in diagnostics (default: FILE's name)
        -o OUT                 output file (default: FILE with .ptx/.cubin/.ltoir/.optixir)
        --wait-for-proof       on a miss, answer only once the key is final: the
                               daemon proves beside each miss whether the answer
                               depends on the working directory and file names,
                               and otherwise answers as soon as the compile ends,
                               under this place's key (for scripts that use KEY)
      Any other argument starting with '-' is passed to NVRTC as an option
      (-D, -U, -std=, -rdc=true, -lineinfo, ...); the daemon checks it.
      Prints how the request was served (HIT, MISS or JOINED, followed by
      (remote) when the daemon's cluster tier answered its miss), the cache key,
      the compile time and the lowered names. Exit status 1 when the program
      does not compile (the log goes to stderr).
  precompile MANIFEST [--export FILE.jcb]
      Compile every program a manifest lists, in parallel, without writing
      or loading anything: it warms the daemon's store. --export also writes
      the entries it compiled to a bundle (see export). One program per line,
      with the flags of `compile` (not -o); --arch takes a comma list and the
      program is compiled for each; quote with '...' or "..."; # comments.
      Paths are relative to the manifest. Example line:
        kernels/sort.cu --target cubin --arch sm_80,sm_90 --name-expression 'sort<128, 4>'
      Shows a progress bar on stderr and a table of results. Exit status 1
      when a program does not compile, 3 when a request failed.
  link FILE... [flags] [nvJitLink options]
      Link objects through jitcached (cached like compiles). Each FILE's kind
      comes from its extension: .ltoir, .ptx, .cubin, .fatbin, .o, .a.
        --arch ARCH            target architecture, e.g. sm_90 (required)
        --target KIND          cubin (default) or ptx
        -o OUT                 output file (default: a.cubin or a.ptx)
      Other arguments starting with '-' go to nvJitLink (-O3, -ftz=true,
      -kernels-used=NAME, ...); LTO-IR inputs imply -lto. Files go by
      digest, their bytes only when the daemon lacks them. Exit status 1
      when the inputs do not link (the log goes to stderr).
  ping [--json]
      Show the daemon's version, toolchain and store.
      --json, here and on config, ls and show: the daemon's answer as the
      protobuf JSON mapping of its message (field names as in
      jitcache.proto, 64-bit numbers as strings), one line.
  preload
      Print the LD_PRELOAD= line that puts jitcache's drop-in NVRTC,
      nvJitLink and libNVVM in front of an unmodified program:
        export $(jitcache preload); python3 my_program.py
      They live in a directory laid out like the CUDA toolkit
      (LIBDIR/jitcache/cuda: lib64/, nvvm/lib64/), whose other entries
      lead to the toolkit, so that a program that finds the toolkit from
      where its NVRTC lives (CuPy, cuda.pathfinder) finds it there. Asks no
      daemon. Exit status 3 when no drop-ins are installed beside jitcache.
  health
      The standard gRPC health check (grpc.health.v1): prints SERVING and
      exits 0 while the daemon serves; NOT_SERVING (exit 1) once it is
      shutting down; exit 3 when it cannot be reached.
  stats [--zero] [--json]
      Show the daemon's counters: requests, hits, misses, joins, compile
      errors, rejections by reason, queue, compile seconds spent and saved,
      store entries, bytes (the store's files), live bytes, the cap and
      evictions; then one "user UID NAME key=value..." line per user
      (administrators see every user, others their own line).
      --zero (admin) sets the counters to zero after showing them.
      --json prints them as one JSON object instead: each number under its
      name, and "users", a list of objects.
  ls [--arch ARCH] [--kind ptx|cubin|ltoir|optixir] [--sort used|size] [--limit N]
     [--json]
      List the store's entries, most recently used (or largest) first.
  show KEY_PREFIX [--ptx | -o FILE | --json]
      Show one entry: outcome, target, arch, options, program, sizes,
      created and last used, compile time, lowered names and the log.
      --ptx prints a PTX entry's object; -o FILE writes the object.
  export [--arch A[,B]] [--key PREFIX]... -o FILE.jcb
      Write the matching entries (all by default), with their objects, to a
      bundle file: format version, toolchain fingerprint, every record, a
      checksum per object. The file appears whole or not at all.
  import FILE.jcb            (admin)
      Check the whole bundle, then import the entries built by this daemon's
      toolchain; reports how many were refused and why (other toolchain,
      corrupt, already present). A damaged bundle imports nothing.
  evict --to-size SIZE | --older-than DURATION   (admin)
      Evict least recently used entries until the store's files take at
      most SIZE (500M, 2G), and/or every entry unused for DURATION (12h, 7d).
  clear                      (admin)
      Remove every entry.
  config [--json]             (admin)
      Show the daemon's effective settings.
  Admin commands are refused (PERMISSION_DENIED) unless you are root, the
  daemon's user or in its --admin_group, as the kernel tells the daemon.

Global flags:
  --socket PATH   daemon socket (default: $JITCACHE_SOCKET, else the node's
                  service socket /run/jitcache/jitcache.sock if it exists,
                  else $XDG_RUNTIME_DIR/jitcache.sock, else
                  /tmp/jitcache-$UID.sock)
  --help          this text
  --version       this program's version (`jitcache ping` gives the
                  daemon's)
  COMMAND --help  that command's part of this text

Environment:
  JITCACHE_SOCKET            the daemon's socket (see --socket)
  XDG_RUNTIME_DIR            where the socket is when JITCACHE_SOCKET is unset
  JITCACHE_SCAN_CACHE        where include scans are kept between processes
                             (default $XDG_CACHE_HOME/jitcache/scans)
  JITCACHE_SCAN_WATCH_AFTER  repeated scans of one program before its
                             directories are watched for changes
  JITCACHE_HIT_SPIN_US       how long an ask on a kept framed-socket connection
                             polls before it sleeps (default 50)
  JITCACHE_NO_FALLBACK       set: never compile in this process when the
                             daemon cannot answer
  JITCACHE_LIBNVRTC          the NVRTC to compile with in this process
  CUDA_HOME                  the toolkit (default /usr/local/cuda)

Exit status: 0 success, 1 compile error, 2 usage error, 3 daemon or I/O error.
)";

using jitcache::cli::kExitCompileError;
using jitcache::cli::kExitFailure;
using jitcache::cli::kExitUsage;
using jitcache::cli::TakeValue;
using jitcache::cli::UsageError;

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `command`'s part of `usage`: its line under "Commands:" and the lines
// indented below it; "" for a command it does not list.
std::string CommandUsage(absl::string_view usage, absl::string_view command) {
  std::string out;
  bool in = false;
  for (absl::string_view line : absl::StrSplit(usage, '\n')) {
    if (absl::StartsWith(line, "  ") && !absl::StartsWith(line, "   ")) {
      // A command's first line: "  NAME ..." (or "  NAME / OTHER ...").
      absl::string_view rest = line.substr(2);
      const absl::string_view name = rest.substr(0, rest.find(' '));
      in = name == command;
    } else if (!absl::StartsWith(line, "   ")) {
      in = false;  // a heading, a blank line
    }
    if (in) absl::StrAppend(&out, absl::StripPrefix(line, "  "), "\n");
  }
  return out;
}

int Ping(const jitcache::Client& client) {
  absl::StatusOr<jitcache::DaemonInfo> info = client.Ping();
  if (!info.ok()) {
    return jitcache::cli::Failed(info.status());
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
  for (const jitcache::DaemonInfo::Library& lib : info->libraries) {
    std::cout << lib.name << ": " << lib.path << " (device " << lib.device
              << ", inode " << lib.inode << ", " << lib.size << " bytes, mtime "
              << lib.mtime_ns << " ns)\n";
  }
  return 0;
}

// A number as the text form prints it: counts whole (past 2^53 a double
// would not be), times to the ms.
std::string Number(double value) {
  return value == std::floor(value) && value < 0x1p53
             ? absl::StrFormat("%.0f", value)
             : absl::StrFormat("%.3f", value);
}

// A JSON string of `text` (quotes, backslashes and control bytes escaped).
std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// `stats --json`: one object, every number under its StatsResponse name
// (as the text form and the metrics name them), and "users", a list.
std::string StatsJson(const jitcache::DaemonStats& s) {
  std::string out = "{";
  for (const auto& [name, value] : s.values) {
    absl::StrAppend(&out, out.size() > 1 ? ", " : "", JsonString(name), ": ",
                    Number(value));
  }
  absl::StrAppend(&out, out.size() > 1 ? ", " : "", "\"users\": [");
  bool first = true;
  for (const jitcache::UserUsage& u : s.users) {
    absl::StrAppend(
        &out, first ? "" : ", ",
        absl::StrFormat(
            "{\"uid\": %u, \"name\": %s, \"requests\": %d, \"hits\": %d, "
            "\"misses\": %d, \"joins\": %d, \"rejected\": %d, "
            "\"compile_seconds\": %.3f, \"queued\": %d}",
            u.uid, JsonString(u.name), u.requests, u.hits, u.misses, u.joins,
            u.rejected, u.compile_seconds, u.queued));
    first = false;
  }
  return out + "]}\n";
}

int Stats(const jitcache::Client& client, bool zero, bool json) {
  absl::StatusOr<jitcache::DaemonStats> s = client.Stats(zero);
  if (!s.ok()) {
    return jitcache::cli::Failed(s.status());
  }
  if (json) {
    std::cout << StatsJson(*s);
    return 0;
  }
  // One "name value" line each, every number under its name in the
  // daemon's StatsResponse (and its metrics): easy to read and to parse.
  for (const auto& [name, value] : s->values) {
    // Counts whole (past 2^53 a double would not be), times to the ms.
    std::cout << name << " " << Number(value) << "\n";
  }
  for (const jitcache::UserUsage& u : s->users) {
    std::cout << absl::StrFormat(
        "user %u %s requests=%d hits=%d misses=%d joins=%d rejected=%d "
        "compile_seconds=%.3f queued=%d\n",
        u.uid, u.name.empty() ? "-" : u.name, u.requests, u.hits, u.misses,
        u.joins, u.rejected, u.compile_seconds, u.queued);
  }
  return 0;
}

// Writes an object, prints how it was served; shared by compile and link.
int Report(const jitcache::ObjectCode& code, const std::string& output,
           double total_ms, absl::string_view failure) {
  // "MISS (remote)": the daemon missed and its cluster tier answered.
  const std::string served =
      absl::StrCat(jitcache::ServedName(code.served),
                   code.served_remotely ? " (remote)" : "");
  if (code.compiled && !jitcache::cli::WriteOutput(output, code.bytes)) {
    return kExitFailure;
  }
  const std::map<std::string, std::string> lowered(code.symbol_mapping.begin(),
                                                   code.symbol_mapping.end());
  std::cout << jitcache::cli::ResultLines(
      served, code.compiled, std::string(failure), code.cache_key,
      code.compile_time_us / 1000.0, total_ms, output, code.bytes.size(),
      lowered);
  if (!code.compiled) {
    std::cerr << code.log;
    return kExitCompileError;
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
        if (absl::IsInvalidArgument(s)) return UsageError(s.message());
        return jitcache::cli::Failed(s);
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
    return jitcache::cli::Failed(code.status());
  }
  return Report(*code, output, total_ms, "LINK_ERROR");
}

// What one `compile` command line (or manifest line) asks for.
struct CompileArgs {
  jitcache::cli::CompileFlags flags;  // as spelled
  jitcache::Program program{""};
  jitcache::ProgramOptions options;
  jitcache::CodeType target = jitcache::CodeType::kPtx;
  std::string file;  // flags.file, from the base directory
};

// Parses compile flags; relative paths are taken from `base_dir` (empty:
// the working directory). INVALID_ARGUMENT for usage errors, NOT_FOUND for
// files that cannot be read.
absl::StatusOr<CompileArgs> ParseCompileArgs(
    const std::vector<std::string>& args, const std::string& base_dir) {
  auto path = [&base_dir](const std::string& p) {
    return base_dir.empty() || absl::StartsWith(p, "/")
               ? p
               : absl::StrCat(base_dir, "/", p);
  };
  CompileArgs out;
  jitcache::cli::CompileFlags& flags = out.flags;
  std::string error;
  if (!jitcache::cli::ParseCompileFlags(args, &flags, &error)) {
    return absl::InvalidArgumentError(error);
  }
  out.target = *jitcache::ParseCodeType(flags.target);  // checked above
  out.options.name_expressions = flags.name_expressions;
  out.options.extra_options = flags.nvrtc_options;
  out.options.wait_for_proof = flags.wait_for_proof;
  out.file = path(flags.file);
  std::optional<std::string> source = ReadFile(out.file);
  if (!source) {
    return absl::NotFoundError(absl::StrCat("cannot read ", out.file));
  }
  out.program = jitcache::Program(
      *std::move(source), flags.program_name.empty()
                              ? out.file.substr(out.file.find_last_of('/') + 1)
                              : flags.program_name);
  for (const auto& [name, file] : flags.headers) {
    std::optional<std::string> contents = ReadFile(path(file));
    if (!contents) {
      return absl::NotFoundError(absl::StrCat("cannot read ", path(file)));
    }
    out.program.AddHeader(name, *std::move(contents));
  }
  return out;
}

// Keeps `memo` without its place too, so that the same command from a new
// working directory with the same files is answered by the front end
// (client/cli/direct_memo.h). Not when a path the scan depended on does not
// move with the place.
void KeepMovableDirectMemo(const std::string& socket, const std::string& dir,
                           const jitcache::cli::DirectMemo& memo,
                           const jitcache::internal::AskedCompile& asked) {
  if (asked.included == nullptr || !asked.depends_on->moves_with_place) return;
  jitcache::v1::CompileRequest request;
  if (!request.ParseFromString(asked.request)) return;
  request.clear_working_directory();
  request.clear_included_mtimes_ns();
  std::vector<std::pair<std::string, std::string>> digests;
  for (const jitcache::internal::ScannedFile& f : asked.included->files) {
    digests.emplace_back(f.path, f.digest.Hex());
  }
  const std::vector<std::string> raw(request.options().begin(),
                                     request.options().end());
  absl::StatusOr<std::vector<std::string>> ordered = jitcache::ToAbsl(
      jitcache::OrderedCompileOptions(raw), absl::StatusCode::kInvalidArgument);
  if (!ordered.ok()) return;
  jitcache::cli::OptionPaths paths;
  for (const std::string& option : *ordered) {
    absl::string_view value = option;
    if (absl::ConsumePrefix(&value,
                            jitcache::AbslView(jitcache::kIncludePathOption))) {
      paths.search_dirs.emplace_back(value);
    } else if (absl::ConsumePrefix(
                   &value, jitcache::AbslView(jitcache::kPreIncludeOption))) {
      paths.pre_includes.emplace_back(value);
    }
  }
  std::optional<jitcache::cli::MovableDirectMemo> movable =
      jitcache::cli::TakeOutPlace(memo,
                                  request.program_name().empty()
                                      ? "program.cu"
                                      : request.program_name(),
                                  digests, asked.depends_on->opened, paths,
                                  request.SerializeAsString());
  if (!movable.has_value()) return;
  jitcache::KeepPrivateFile(
      dir, jitcache::cli::MovableDirectMemoName(socket, memo.asked),
      jitcache::cli::EncodeMovableDirectMemo(*movable));
}

// Keeps what this compile asked, so that the next `jitcache compile` of
// the same program in the same place is answered by the front end while
// nothing the scan depended on changes (client/cli/direct_memo.h). Best
// effort: it is a cache. The memo of this place holds files by their
// stamps, so only once they have settled; the one without its place holds
// their bytes' digests too, and is kept at once: a code generator that
// writes its program and compiles it straight away, every run, is still
// answered by the front end (which checks the bytes of a file whose stamp
// is new or may still move).
void KeepDirectMemo(const std::string& socket, const CompileArgs& compile,
                    const jitcache::internal::AskedCompile& asked) {
  const std::string dir =
      jitcache::cli::DirectMemoDir(jitcache::DefaultScanCachePath());
  if (asked.depends_on == nullptr || dir.empty()) return;
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (ec) return;
  jitcache::cli::DirectMemo memo;
  // From the very bytes this compile was asked about, not read again.
  memo.asked = jitcache::compile_wire::Encode(jitcache::cli::FrontRequest(
      compile.flags, compile.program.source(), compile.program.headers()));
  memo.cwd = cwd;
  memo.toolkit_fingerprint = asked.toolkit_fingerprint;
  memo.request = asked.request;
  memo.files = asked.depends_on->files;
  memo.absent = asked.depends_on->absent;
  if (asked.depends_on->files_settled) {
    jitcache::KeepPrivateFile(
        dir, jitcache::cli::DirectMemoName(socket, cwd, memo.asked),
        jitcache::cli::EncodeDirectMemo(memo));
    KeepMovableDirectMemo(socket, dir, memo, asked);
    return;
  }
  // A stamp taken while it could still move is never trusted later, even
  // once it is old: on a file system with coarse times the same stamp can
  // hold other bytes. Every file is then checked by its bytes.
  for (auto& [path, stamp] : memo.files) stamp = jitcache::cli::kUntrustedStamp;
  KeepMovableDirectMemo(socket, dir, memo, asked);
}

int Compile(const jitcache::Client& client,
            const std::vector<std::string>& args) {
  absl::StatusOr<CompileArgs> parsed = ParseCompileArgs(args, "");
  if (!parsed.ok()) {
    if (absl::IsInvalidArgument(parsed.status())) {
      return UsageError(parsed.status().message());
    }
    return jitcache::cli::Failed(parsed.status());
  }
  if (parsed->flags.archs.size() > 1) {
    return UsageError("compile takes one --arch (precompile takes several)");
  }
  if (!parsed->flags.archs.empty()) {
    parsed->options.arch = parsed->flags.archs[0];
  }
  const std::string output =
      parsed->flags.output.empty()
          ? jitcache::cli::DefaultOutput(
                parsed->file,
                std::string(jitcache::CodeTypeName(parsed->target)))
          : parsed->flags.output;
  const absl::Time start = absl::Now();
  jitcache::internal::AskedCompile asked;
  const absl::StatusOr<jitcache::ObjectCode> code =
      jitcache::internal::CompileAndRecord(
          client, parsed->program, parsed->options, parsed->target, &asked);
  const double total_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  if (!code.ok()) {
    return jitcache::cli::Failed(code.status());
  }
  if (code->served != jitcache::Served::kLocal) {
    KeepDirectMemo(client.socket_path(), *parsed, asked);
  }
  return Report(*code, output, total_ms, "COMPILE_ERROR");
}

// Splits a manifest line into words: whitespace separates, '...' and "..."
// quote, # starts a comment outside quotes.
absl::StatusOr<std::vector<std::string>> SplitWords(absl::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word.push_back(c);
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '#') {
      break;
    } else if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (quote != 0) return absl::InvalidArgumentError("unclosed quote");
  if (in_word) words.push_back(std::move(word));
  return words;
}

// A manifest's programs (`compile`'s flags, one per line, paths relative
// to the manifest), or the exit status of what was wrong (reported).
std::variant<std::vector<CompileArgs>, int> ReadManifest(
    const std::string& manifest) {
  std::ifstream in(manifest);
  if (!in) {
    std::cerr << "jitcache: cannot read " << manifest << "\n";
    return kExitFailure;
  }
  const size_t slash = manifest.find_last_of('/');
  const std::string base =
      slash == std::string::npos ? "" : manifest.substr(0, slash);
  std::vector<CompileArgs> programs;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    absl::StatusOr<std::vector<std::string>> words = SplitWords(text);
    if (!words.ok()) {
      return UsageError(
          absl::StrCat(manifest, ":", number, ": ", words.status().message()));
    }
    if (words->empty()) continue;
    absl::StatusOr<CompileArgs> parsed = ParseCompileArgs(*words, base);
    if (!parsed.ok()) {
      std::cerr << "jitcache: " << manifest << ":" << number << ": "
                << parsed.status().message() << "\n";
      return absl::IsInvalidArgument(parsed.status()) ? kExitUsage
                                                      : kExitFailure;
    }
    programs.push_back(*std::move(parsed));
  }
  return programs;
}

// One program for one architecture, as precompiled.
struct PrecompileRow {
  std::string program, arch;
  absl::StatusOr<jitcache::ObjectCode> code;
};

// The table of rows and the summary line on stdout, each failure's and
// compile error's message on stderr. Returns {compile errors, failures}.
std::pair<int, int> ReportPrecompile(const std::vector<PrecompileRow>& rows,
                                     double seconds) {
  int ok = 0, compile_errors = 0, failed = 0;
  std::cout << absl::StrFormat("%-28s %-10s %-14s %10s %10s\n", "program",
                               "arch", "result", "compile ms", "bytes");
  for (const PrecompileRow& row : rows) {
    std::string result, ms = "-", bytes = "-";
    if (!row.code.ok()) {
      ++failed;
      result = absl::StatusCodeToString(row.code.status().code());
    } else {
      result = row.code->compiled
                   ? std::string(jitcache::ServedName(row.code->served))
                   : "COMPILE_ERROR";
      (row.code->compiled ? ok : compile_errors)++;
      ms = absl::StrFormat("%.1f", row.code->compile_time_us / 1000.0);
      bytes = absl::StrCat(row.code->bytes.size());
    }
    std::cout << absl::StrFormat("%-28s %-10s %-14s %10s %10s\n", row.program,
                                 row.arch.empty() ? "default" : row.arch,
                                 result, ms, bytes);
  }
  std::cout << absl::StrFormat(
      "%d compiled, %d compile errors, %d failed, in %.2f s\n", ok,
      compile_errors, failed, seconds);
  for (const PrecompileRow& row : rows) {
    if (!row.code.ok()) {
      std::cerr << row.program << " " << row.arch << ": "
                << row.code.status().message() << "\n";
    } else if (!row.code->compiled) {
      std::cerr << row.program << " " << row.arch << ":\n" << row.code->log;
    }
  }
  return {compile_errors, failed};
}

int Precompile(const jitcache::Client& client, const std::string& manifest,
               const std::string& bundle) {
  if (manifest.empty()) return UsageError("precompile takes one MANIFEST");
  std::variant<std::vector<CompileArgs>, int> read = ReadManifest(manifest);
  if (const int* code = std::get_if<int>(&read)) return *code;
  const std::vector<CompileArgs>& programs =
      std::get<std::vector<CompileArgs>>(read);
  size_t total = 0;
  for (const CompileArgs& p : programs)
    total += std::max<size_t>(1, p.flags.archs.size());
  if (total == 0) return UsageError(absl::StrCat(manifest, " lists nothing"));

  std::vector<jitcache::Client::PrecompileItem> items;
  for (const CompileArgs& p : programs) {
    items.push_back({p.program, p.options, p.target, p.flags.archs});
  }
  const absl::Time start = absl::Now();
  std::vector<PrecompileRow> rows;
  {
    jitcache::cli::ProgressBar bar("compiled");
    for (auto& outcome : client.Precompile(
             items, [&](size_t done, size_t all) { bar.Update(done, all); })) {
      rows.push_back({items[outcome.item].program.name(), outcome.arch,
                      std::move(outcome.code)});
    }
  }
  const auto [compile_errors, failed] =
      ReportPrecompile(rows, absl::ToDoubleSeconds(absl::Now() - start));
  if (failed > 0) return kExitFailure;
  if (!bundle.empty()) {
    std::vector<std::string> keys;
    for (const PrecompileRow& row : rows) {
      if (row.code.ok() && !row.code->cache_key.empty()) {
        keys.push_back(row.code->cache_key);
      }
    }
    if (int code = jitcache::cli::ExportKeys(client, keys, bundle); code != 0) {
      return code;
    }
  }
  return compile_errors > 0 ? kExitCompileError : 0;
}

// The standard gRPC health check, for probes and scripts.
int Health(const std::string& socket) {
  auto stub = grpc::health::v1::Health::NewStub(jitcache::MakeDaemonChannel(
      socket.empty() ? jitcache::DefaultClientSocketPath() : socket));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, {}, &response);
  if (!status.ok()) {
    std::cerr << "jitcache: health: "
              << absl::StatusCodeToString(
                     static_cast<absl::StatusCode>(status.error_code()))
              << ": " << status.error_message() << "\n";
    return kExitFailure;
  }
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
                   response.status())
            << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING
             ? 0
             : 1;
}

// Runs the command `line` names.
int Run(const jitcache::Client& client,
        const jitcache::cli::CommandLine& line) {
  const std::string& command = line.command;
  if (command == "ping") return Ping(client);
  if (command == "health") return Health(line.socket);
  if (command == "stats") return Stats(client, line.zero, line.json);
  if (command == "compile") return Compile(client, line.passthrough);
  if (command == "link") return Link(client, line.passthrough);
  if (command == "precompile") {
    return Precompile(client, line.file, line.export_path);
  }
  if (std::optional<int> store = jitcache::cli::RunStoreCommand(client, line)) {
    return *store;
  }
  return UsageError(absl::StrCat("unknown command '", command, "'"));
}

}  // namespace

int main(int argc, char** argv) {
  std::variant<jitcache::cli::CommandLine, int> parsed =
      jitcache::cli::ParseCommandLine(argc, argv);
  if (const int* usage = std::get_if<int>(&parsed)) return *usage;
  const jitcache::cli::CommandLine& line =
      std::get<jitcache::cli::CommandLine>(parsed);
  if (line.version) {
    std::cout << "jitcache " JITCACHE_VERSION "\n";
    return 0;
  }
  if (line.help && line.command.empty()) {
    std::cout << kUsage;
    return 0;
  }
  if (line.command.empty()) return UsageError("no command given");
  if (line.help) {
    std::cout << "usage: jitcache [--socket PATH] "
              << CommandUsage(kUsage, line.command);
    return 0;
  }
  // compile and link keep their arguments as given: --json among them is
  // none of theirs.
  if (std::find(line.passthrough.begin(), line.passthrough.end(), "--json") !=
      line.passthrough.end()) {
    return UsageError(absl::StrCat(line.command, " has no --json"));
  }
  if (line.json && line.command != "stats") {
    if (std::optional<int> code = jitcache::cli::PrintJsonAnswer(line)) {
      std::cout.flush();
      std::_Exit(*code);
    }
    return UsageError(absl::StrCat(line.command, " has no --json"));
  }
  if (line.command == "preload") return jitcache::cli::Preload();
  jitcache::ClientOptions options;
  options.socket_path = line.socket;
  absl::StatusOr<jitcache::Client> client = jitcache::Client::Connect(options);
  if (!client.ok()) {
    return jitcache::cli::Failed(client.status());
  }
  const int code = Run(*client, line);
  // The work is done and written: leave without tearing down gRPC's
  // threads and channels, which costs a fresh process about a millisecond.
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(code);
}
