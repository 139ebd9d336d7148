// jitcached: flags and signals. Everything else is in Daemon.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/internal/program_name.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/size_units.h"
#include "server/build/cuda_compiler.h"
#include "server/build/worker_compiler.h"
#include "server/daemon.h"
#include "server/remote/remote_keys.h"
#include "server/systemd/listen_sockets.h"
#include "server/verify_command.h"

ABSL_FLAG(std::string, socket, "",
          "Unix socket to serve on. Default: $JITCACHE_SOCKET, else "
          "$XDG_RUNTIME_DIR/jitcache.sock, else /tmp/jitcache-$UID.sock. "
          "When started by socket activation (systemd's LISTEN_FDS), the "
          "passed sockets are served instead: PATH and, optionally, PATH.hit");
ABSL_FLAG(std::string, socket_group, "",
          "Group of the socket files (stand-alone; a .socket unit has "
          "SocketGroup=): with --socket_mode=0660, its members may connect");
ABSL_FLAG(std::string, socket_mode, "",
          "Mode of the socket files, in octal, e.g. 0660 (stand-alone; a "
          ".socket unit has SocketMode=). Default: as the umask leaves it");
ABSL_FLAG(
    std::string, store, "",
    "Store directory (RocksDB), or :memory: for a store that dies with "
    "the daemon. Default: $JITCACHE_STORE, else $XDG_CACHE_HOME/jitcache, "
    "else ~/.cache/jitcache");
ABSL_FLAG(std::string, cuda_root, "",
          "CUDA toolkit whose include/ is on every compile's include path. "
          "Default: $CUDA_HOME, else /usr/local/cuda");
ABSL_FLAG(std::vector<std::string>, ptxas, {},
          "More ptxas binaries jitcache-ptxas may ask the daemon to run "
          "(comma-separated; the toolkit's bin/ptxas always), hashed at "
          "start; e.g. Triton's bundled one. A program naming any other "
          "ptxas runs it itself");
ABSL_FLAG(std::string, libnvvm, "",
          "The libNVVM (libnvvm.so.4) that jitcache's libnvvm.so.4 may ask "
          "the daemon to run, hashed at start; e.g. the nvidia-nvvm wheel's. "
          "Default: the toolkit's nvvm/lib64/libnvvm.so.4 when it has one; "
          "'none': no libNVVM. A program whose libNVVM is any other file "
          "runs it itself");
ABSL_FLAG(int, workers, 0,
          "Compiles at a time, each in its own jitcache-worker process; 0 "
          "means one per core");
ABSL_FLAG(int, max_queued, 1024,
          "Distinct compiles that may wait for a worker; past it new compiles "
          "get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_queued_per_user, 512,
          "Distinct compiles one user (uid) may have waiting; past it that "
          "user's new compiles get RESOURCE_EXHAUSTED. 0: no per-user cap. "
          "Workers are shared round-robin between users either way");
ABSL_FLAG(std::string, metrics_address, "",
          "Serve Prometheus metrics on http://HOST:PORT/metrics, e.g. "
          "127.0.0.1:9464; empty: off");
ABSL_FLAG(std::string, remote, "",
          "A Redis server or Redis Cluster shared by the team's nodes, behind "
          "this node's store: redis://HOST:PORT[/DB], rediss://HOST:PORT[/DB] "
          "(TLS), unix:///PATH[?db=N], redis-cluster://HOST:PORT[,HOST:PORT"
          "...] (the cluster is found from these seeds and followed through "
          "failovers and resharding) or redis-cluster+tls://HOST:PORT[,...]. "
          "A local miss asks it (values are checked, never trusted); a "
          "compile's result is "
          "written to it in the background; one node compiles a key while the "
          "others wait for its result. Redis down or slow: the node serves and "
          "compiles locally. Empty: none");
ABSL_FLAG(std::string, remote_max_object, "64M",
          "Entries larger than this stay local");
ABSL_FLAG(std::string, remote_credentials_file, "",
          "With --remote: a file with one line, PASSWORD or USER PASSWORD "
          "(a Redis ACL user), private to the daemon's user; the daemon "
          "authenticates each connection with it. Empty: no AUTH");
ABSL_FLAG(std::string, remote_key_file, "",
          "With --remote: the team keys, one a line as hex (openssl rand "
          "-hex 32), in a file of the daemon's user that no one else can "
          "read. The first signs every value and lease this node writes to "
          "Redis; any verifies (rotation: add the new key first, drop the "
          "old one once every node has it). Values and leases that no key "
          "verifies are ignored");
ABSL_FLAG(std::string, remote_tls_ca_file, "",
          "With rediss:// or redis-cluster+tls://: the CA certificate(s) "
          "that signed the Redis servers' certificates (PEM). Every server's "
          "certificate is verified, and must name the host it is reached at "
          "(or --remote_tls_server_name)");
ABSL_FLAG(std::string, remote_tls_cert_file, "",
          "With TLS: this node's certificate (PEM chain), for servers that "
          "ask clients for one (tls-auth-clients); with --remote_tls_key_file");
ABSL_FLAG(std::string, remote_tls_key_file, "",
          "With TLS: the private key of --remote_tls_cert_file (PEM), in a "
          "file of the daemon's user that no one else can read");
ABSL_FLAG(std::string, remote_tls_server_name, "",
          "With TLS: the name every Redis server's certificate must carry "
          "(and the name sent to it); empty: the host each server is reached "
          "at, a DNS name or an IP address");
ABSL_FLAG(bool, remote_replica_reads, false,
          "With redis-cluster:// or redis-cluster+tls://: read entries from "
          "the replicas of their slot's master (in turn), so that the bytes "
          "of hot kernels come from more servers; the master confirms each "
          "value (its 32-byte MAC). A replica that has no value yet "
          "(replication lags), holds another, or cannot answer leaves the "
          "read to the master");
ABSL_FLAG(std::string, log_level, "info",
          "Least level logged: debug (every request), info (every compile), "
          "warning or error");
ABSL_FLAG(std::string, compile_memory_limit, "8G",
          "Address space each compile worker may use, e.g. 4G; a compile "
          "that needs more answers RESOURCE_EXHAUSTED naming this flag. 0: "
          "no limit");
ABSL_FLAG(bool, in_process_compiles, false,
          "Compile inside the daemon instead of in jitcache-worker "
          "processes: no crash, memory or hard time isolation, no view of "
          "its own for each compile (it reads the daemon's file system and "
          "working directory), and one NVRTC for every compile, whose state "
          "from one compile can change the next one's output (for "
          "benchmarks and debugging only)");
ABSL_FLAG(bool, place_proofs, true,
          "Share a compile's answer between callers in different places "
          "(working directories, program directories, file times) where a "
          "second compile of it elsewhere, run beside the first, gives the "
          "same answer; and an nvJitLink link's between callers who name its "
          "inputs differently where a second link under other names does. "
          "false: every answer is kept for its own place and names (no "
          "second run; callers in other directories miss)");
ABSL_FLAG(std::string, worker_binary, "",
          "The compile worker to run; default: jitcache-worker next to "
          "jitcached");
ABSL_FLAG(int, compile_time_limit_seconds, 600,
          "A compile or link running longer is killed (its worker with it) "
          "and answered DEADLINE_EXCEEDED (not cached)");
ABSL_FLAG(int64_t, max_source_bytes, int64_t{16} << 20,
          "Largest source accepted, in bytes");
ABSL_FLAG(int64_t, max_header_bytes, int64_t{16} << 20,
          "Largest in-memory header accepted, in bytes");
ABSL_FLAG(int, max_headers, 4096, "Most in-memory headers in one request");
ABSL_FLAG(int, kept_file_sets, 8,
          "Sets of included files kept in memory for the next miss with the "
          "same files (each as large as its headers)");
ABSL_FLAG(std::string, hot_cache_size, "256M",
          "Memory for the answers of recent hits, kept whole so that the "
          "next hit on them reads nothing from the store, e.g. 64M, 1G; 0: "
          "none. An answer is served from it only while the store still "
          "holds what it was built from");
ABSL_FLAG(std::string, shared_answer_size, "256K",
          "Hits at least this large go to libnvrtc.so.13 and libjitcache "
          "as a sealed memory file, its descriptor passed over the framed "
          "socket, instead of copied through it, e.g. 1M; 0: never");
ABSL_FLAG(int, max_included_files, 16384,
          "Most files one request may carry for the compile to read (each "
          "at most --max_header_bytes)");
ABSL_FLAG(int, max_options, 512, "Most options in one request");
ABSL_FLAG(int, max_name_expressions, 4096,
          "Most name expressions in one request");
ABSL_FLAG(int64_t, max_request_bytes, int64_t{64} << 20,
          "Largest request message, in bytes (also gRPC's receive limit)");
ABSL_FLAG(bool, hit_socket, true,
          "Also answer cache hits on SOCKET.hit, a plain framed protocol that "
          "short-lived processes (the jitcache command) use without loading "
          "gRPC");
ABSL_FLAG(bool, verify, false,
          "Check every entry of --store (frames, SHA-256 of every object, "
          "records and the objects they name), print a report and exit: 0 "
          "when all is sound, 1 otherwise; a store too damaged to open is "
          "named, with what a start would do (repair it, or move it aside "
          "and start empty), and left as it is. The daemon must not be "
          "running on that store");
ABSL_FLAG(std::string, max_size, "10G",
          "Most bytes the store's directory may take, as du counts them, "
          "e.g. 500M, 20G; 0: no cap. Past "
          "--high_watermark of it, least recently used entries are evicted "
          "in the background down to --low_watermark of it");
ABSL_FLAG(double, high_watermark, 0.95,
          "Fraction of --max_size at which eviction starts");
ABSL_FLAG(double, low_watermark, 0.85,
          "Fraction of --max_size eviction brings the store down to");
ABSL_FLAG(std::string, max_age, "",
          "Evict entries unused for this long, e.g. 30d, 12h; empty: never");
ABSL_FLAG(std::string, compression, "zstd",
          "Compression of objects and records at rest: zstd, lz4 or none "
          "(applies to what is written from now on)");
ABSL_FLAG(std::string, admin_group, "",
          "Members of this group may run the admin commands (stats --zero, "
          "evict, clear, config, import), besides root and the daemon's own "
          "user; decided from the socket peer's credentials");
ABSL_FLAG(int, shutdown_grace_seconds, 1,
          "On SIGTERM/SIGINT, compiles are cancelled (UNAVAILABLE) and other "
          "requests get this long to finish before they are cancelled");

// The usage --help asks for (this file's flags; --helpfull: every flag),
// on standard output; the exit status, 0.
int PrintHelp(absl::string_view arg) {
  const bool full = absl::StrContains(arg, "helpfull");
  absl::flags_internal::FlagsHelp(
      std::cout, full ? "" : "server/main.cc",
      absl::flags_internal::HelpFormat::kHumanReadable,
      absl::ProgramUsageMessage());
  std::cout.flush();
  return 0;
}

// Blocks the stop signals in every thread (main waits for them), so that
// a SIGTERM that arrives while the daemon starts (a restart under load) is
// answered by a clean shutdown once it serves, not by death; and makes a
// broken pipe or a write past a file-size limit a failed write (the store
// stays sound and the daemon keeps serving). Returns the stop signals.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  return stop_signals;
}

// What changes the compilers' answers (worker_compiler.h) is no part of the
// daemon's environment either: libNVVM's and nvJitLink's versions and
// anything loaded in this process answer as in a clean one.
void UnsetCompilerEnvironment() {
  std::vector<std::string> unset;
  for (char** e = environ; *e != nullptr; ++e) {
    if (jitcache::ChangesCompilerAnswers(*e)) {
      const std::string entry = *e;
      unset.push_back(entry.substr(0, entry.find('=')));
    }
  }
  for (const std::string& name : unset) unsetenv(name.c_str());
}

// --help lists this file's flags (not Abseil's or gRPC's own), under the
// program's usage message.
void ConfigureUsage() {
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view path) {
    return absl::EndsWith(path, "server/main.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  usage_config.normalize_filename = [](absl::string_view path) {
    const size_t at = path.rfind("server/");
    return std::string(at == absl::string_view::npos ? path : path.substr(at));
  };
  usage_config.version_string = [] {
    return std::string("jitcached " JITCACHE_VERSION "\n");
  };
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "the per-node CUDA compile cache daemon.\n"
      "Serves jitcache clients on a Unix socket, compiles with NVRTC once per\n"
      "distinct request and keeps results in a RocksDB store.\n\n"
      "Usage: jitcached [--socket=PATH] [--store=DIR] [flags]\n"
      "Stop it with SIGTERM or SIGINT.\n\n"
      "Environment:\n"
      "  JITCACHE_SOCKET   the socket when --socket is not given\n"
      "  JITCACHE_STORE    the store when --store is not given\n"
      "  XDG_RUNTIME_DIR   the socket's directory when neither is set\n"
      "  XDG_CACHE_HOME    the store's directory when neither is set\n"
      "  CUDA_HOME         the toolkit when --cuda_root is not given\n"
      "  LISTEN_FDS, LISTEN_PID, NOTIFY_SOCKET, WATCHDOG_USEC, JOURNAL_STREAM\n"
      "                    the service manager's (socket activation,\n"
      "                    readiness, watchdog, logging to the journal)\n"
      "  NVJITLINK_*, NVVM_*, LIBNVVM_*, NV_NVVM_*, LLVM_OVERRIDE_PRODUCER,\n"
      "  AS_SECURE_LOG_FILE  change what nvJitLink and libNVVM answer: unset\n"
      "                    at start, never given to the compile workers");
}

// --help and its kin print the usage and end the program, with exit
// status 0 as a user asked for it (Abseil's own parse ends it with 1).
void HandleHelpFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--" || !absl::StartsWith(arg, "-")) break;
    if (arg == "--help" || arg == "-help" || arg == "--helpfull" ||
        arg == "-helpfull" || arg == "--helpshort" || arg == "-helpshort" ||
        arg == "-h") {
      absl::flags_internal::SetProgramInvocationName(argv[0]);
      std::exit(PrintHelp(arg));
    }
  }
}

// The flags that are the options as they are.
jitcache::DaemonOptions OptionsAsGiven() {
  jitcache::DaemonOptions options;
  options.socket_path = absl::GetFlag(FLAGS_socket);
  if (options.socket_path.empty())
    options.socket_path = jitcache::DefaultSocketPath();
  options.store_path = absl::GetFlag(FLAGS_store);
  if (options.store_path.empty())
    options.store_path = jitcache::DefaultStorePath();
  options.cuda_root = absl::GetFlag(FLAGS_cuda_root);
  options.ptxas = absl::GetFlag(FLAGS_ptxas);
  options.libnvvm = absl::GetFlag(FLAGS_libnvvm);
  options.workers = absl::GetFlag(FLAGS_workers);
  options.max_queued =
      static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_max_queued)));
  options.max_queued_per_user = static_cast<size_t>(
      std::max(0, absl::GetFlag(FLAGS_max_queued_per_user)));
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  options.in_process_compiles = absl::GetFlag(FLAGS_in_process_compiles);
  options.place_proofs = absl::GetFlag(FLAGS_place_proofs);
  options.worker_binary = absl::GetFlag(FLAGS_worker_binary);
  options.socket_group = absl::GetFlag(FLAGS_socket_group);
  options.hit_socket = absl::GetFlag(FLAGS_hit_socket);
  options.compile_time_limit =
      absl::Seconds(absl::GetFlag(FLAGS_compile_time_limit_seconds));
  options.limits.max_source_bytes = absl::GetFlag(FLAGS_max_source_bytes);
  options.limits.max_header_bytes = absl::GetFlag(FLAGS_max_header_bytes);
  options.limits.max_headers = absl::GetFlag(FLAGS_max_headers);
  options.limits.max_included_files = absl::GetFlag(FLAGS_max_included_files);
  options.kept_file_sets =
      static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_kept_file_sets)));
  options.limits.max_options = absl::GetFlag(FLAGS_max_options);
  options.limits.max_name_expressions =
      absl::GetFlag(FLAGS_max_name_expressions);
  options.limits.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  options.remote.url = absl::GetFlag(FLAGS_remote);
  options.remote.tls.ca_file = absl::GetFlag(FLAGS_remote_tls_ca_file);
  options.remote.tls.cert_file = absl::GetFlag(FLAGS_remote_tls_cert_file);
  options.remote.tls.key_file = absl::GetFlag(FLAGS_remote_tls_key_file);
  options.remote.tls.server_name = absl::GetFlag(FLAGS_remote_tls_server_name);
  options.remote.replica_reads = absl::GetFlag(FLAGS_remote_replica_reads);
  options.janitor.high_watermark = absl::GetFlag(FLAGS_high_watermark);
  options.janitor.low_watermark = absl::GetFlag(FLAGS_low_watermark);
  options.admin_group = absl::GetFlag(FLAGS_admin_group);
  return options;
}

// The flags that are parsed into the options (sizes, ages, files, modes);
// INVALID_ARGUMENT (or the file's error) naming the one that is wrong.
absl::Status ParseOptions(jitcache::DaemonOptions& options) {
  for (auto [flag, into] :
       {std::pair{&FLAGS_max_size, &options.janitor.max_size},
        std::pair{&FLAGS_compile_memory_limit, &options.compile_memory_limit},
        std::pair{&FLAGS_hot_cache_size, &options.hot_cache_size},
        std::pair{&FLAGS_shared_answer_size, &options.shared_answer_size},
        std::pair{&FLAGS_remote_max_object, &options.remote.max_object}}) {
    absl::StatusOr<uint64_t> size = jitcache::ParseSize(absl::GetFlag(*flag));
    if (!size.ok()) return size.status();
    *into = *size;
  }
  if (const std::string keys = absl::GetFlag(FLAGS_remote_key_file);
      !keys.empty()) {
    absl::StatusOr<std::vector<std::string>> loaded =
        jitcache::LoadRemoteKeys(keys);
    if (!loaded.ok()) return loaded.status();
    options.remote.keys = *std::move(loaded);
  }
  if (const std::string credentials =
          absl::GetFlag(FLAGS_remote_credentials_file);
      !credentials.empty()) {
    absl::StatusOr<jitcache::RedisCredentials> login =
        jitcache::LoadRedisCredentials(credentials);
    if (!login.ok()) return login.status();
    options.remote.user = login->user;
    options.remote.password = login->password;
  }
  if (!(options.janitor.low_watermark > 0 &&
        options.janitor.low_watermark < options.janitor.high_watermark &&
        options.janitor.high_watermark <= 1)) {
    return absl::InvalidArgumentError(
        "watermarks must satisfy 0 < --low_watermark < --high_watermark <= 1");
  }
  if (!absl::GetFlag(FLAGS_max_age).empty()) {
    absl::StatusOr<absl::Duration> age =
        jitcache::ParseAge(absl::GetFlag(FLAGS_max_age));
    if (!age.ok()) return age.status();
    options.janitor.max_age = *age;
  }
  std::optional<jitcache::Compression> compression =
      jitcache::ParseCompression(absl::GetFlag(FLAGS_compression));
  if (!compression.has_value()) {
    return absl::InvalidArgumentError(
        "--compression must be zstd, lz4 or none");
  }
  options.compression = *compression;
  if (!absl::GetFlag(FLAGS_socket_mode).empty()) {
    const std::string& text = absl::GetFlag(FLAGS_socket_mode);
    char* end = nullptr;
    const unsigned long mode = std::strtoul(text.c_str(), &end, 8);
    if (*end != '\0' || mode > 0777) {
      return absl::InvalidArgumentError(
          "--socket_mode must be an octal mode such as 0660");
    }
    options.socket_mode = static_cast<mode_t>(mode);
  }
  return absl::OkStatus();
}

// What `jitcache config` shows: every flag of this file, as parsed, under
// its own name (so a new flag is listed without anyone remembering to),
// with the sizes spelled out and the values the daemon derived.
std::vector<std::pair<std::string, std::string>> EffectiveConfig(
    const jitcache::DaemonOptions& options) {
  std::map<std::string, std::string> config;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    // --verify is a command, not a setting of a running daemon.
    if (absl::EndsWith(flag->Filename(), "server/main.cc") &&
        name != "verify") {
      const std::string value = flag->CurrentValue();
      config[std::string(name)] = value.empty() ? "(none)" : value;
    }
  }
  auto with_size = [](uint64_t bytes, const char* zero) {
    return bytes == 0
               ? absl::StrCat("0 (", zero, ")")
               : absl::StrCat(bytes, " (", jitcache::FormatSize(bytes), ")");
  };
  config["socket"] = options.socket_path;
  config["socket_activated"] = options.inherited.has_value() ? "true" : "false";
  config["cuda_root"] = options.cuda_root.empty() ? jitcache::DefaultCudaRoot()
                                                  : options.cuda_root;
  config["ptxas"] = options.ptxas.empty() ? "(the toolkit's alone)"
                                          : absl::StrJoin(options.ptxas, ",");
  config["libnvvm"] = options.libnvvm.empty()
                          ? "(the toolkit's, when it has one)"
                          : options.libnvvm;
  config["max_size"] = with_size(options.janitor.max_size, "no cap");
  config["compile_memory_limit"] =
      with_size(options.compile_memory_limit, "none");
  config["remote_max_object"] = with_size(options.remote.max_object, "none");
  config["max_age"] = options.janitor.max_age.has_value()
                          ? absl::FormatDuration(*options.janitor.max_age)
                          : "off";
  return {config.begin(), config.end()};
}

int main(int argc, char** argv) {
  // First of all, before any thread starts.
  const sigset_t stop_signals = BlockStopSignals();
  UnsetCompilerEnvironment();
  ConfigureUsage();
  HandleHelpFlags(argc, argv);
  absl::ParseCommandLine(argc, argv);
  std::optional<jitcache::LogLevel> log_level =
      jitcache::ParseLogLevel(absl::GetFlag(FLAGS_log_level));
  if (!log_level.has_value()) {
    std::fprintf(stderr,
                 "jitcached: --log_level must be debug, info, warning or "
                 "error\n");
    return 2;
  }
  jitcache::SetLogLevel(*log_level);

  jitcache::DaemonOptions options = OptionsAsGiven();
  if (absl::GetFlag(FLAGS_verify)) {
    return jitcache::RunVerify(options.store_path);
  }
  if (absl::Status s = ParseOptions(options); !s.ok()) {
    std::fprintf(stderr, "jitcached: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  // Taken before any thread starts, and the variables unset, so that
  // nothing the daemon starts inherits them.
  absl::StatusOr<std::optional<jitcache::InheritedSockets>> inherited =
      jitcache::TakeInheritedSockets();
  if (!inherited.ok()) {
    std::fprintf(stderr, "jitcached: %s\n",
                 std::string(inherited.status().message()).c_str());
    return 1;
  }
  options.inherited = *std::move(inherited);
  if (options.inherited.has_value()) {
    options.socket_path = options.inherited->grpc_path;
  }
  options.config = EffectiveConfig(options);

  absl::StatusOr<std::unique_ptr<jitcache::Daemon>> daemon =
      jitcache::Daemon::Start(std::move(options));
  if (!daemon.ok()) {
    std::fprintf(stderr, "jitcached: %s\n",
                 std::string(daemon.status().message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "jitcached: ready on %s\n",
               (*daemon)->socket_path().c_str());

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::fprintf(stderr, "jitcached: %s, shutting down\n", strsignal(signal));
  (*daemon)->Shutdown(
      absl::Seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds)));
  return 0;
}
