#ifndef JITCACHE_SERVER_BUILD_COMPILER_H_
#define JITCACHE_SERVER_BUILD_COMPILER_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/file_stamp.h"
#include "common/object_kind.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/source_stats.h"

namespace jitcache {

// What a toolchain is, fixed for the life of the daemon.
struct ToolchainInfo {
  std::string fingerprint;  // raw SHA-256 bytes; part of every key
  std::string description;  // "NVRTC 13.0, nvJitLink 13.0"
  std::vector<int> supported_archs;
  std::vector<std::string> include_dirs;  // on every compile's include path
  std::string root;  // the toolkit's directory, as configured
  // The NVRTC and nvJitLink files loaded (PingResponse.libraries).
  struct Library {
    std::string name;  // "libnvrtc.so.13"
    std::string path;  // resolved
    FileStamp stamp;
    unsigned major = 0, minor = 0;  // its own Version call's answer
    std::string sha256;  // raw; a ptxas binary's or libNVVM's content hash
    // libNVVM's nvvmIRVersion answer.
    unsigned ir_major = 0, ir_minor = 0, debug_major = 0, debug_minor = 0;
  };
  std::vector<Library> libraries;
  // The ptxas binaries the daemon runs (ptxas_registry.h).
  std::vector<Library> ptxas;
  // The libNVVM its workers load (--libnvvm, nvvm_library.h), if any.
  std::optional<Library> libnvvm;
};

struct CompileJob {
  std::string program_name;
  std::string source;
  std::vector<std::pair<std::string, std::string>> headers;  // name, contents
  std::vector<std::string> options;           // as the caller spelled them
  std::vector<std::string> name_expressions;  // sorted, unique
  // What the compile sees besides the toolkit (compile_view.h): the
  // caller's working directory ("" for "/") and the files the request
  // carried (anchored path (compile_place.h), bytes), each with its
  // modification time (file_mtimes_ns, in the same order), laid out where
  // the anchors lie for this working directory and program name.
  // Shared, not copied: a set can hold the bytes of hundreds of headers.
  std::string working_directory;
  std::shared_ptr<const std::vector<std::pair<std::string, std::string>>> files;
  std::vector<int64_t> file_mtimes_ns;
  ObjectKind target = ObjectKind::kPtx;
  // The toolkit's include directories after the options' (false: exactly
  // the options' search path, as NVRTC has it).
  bool toolkit_include_dirs = true;
  // Not part of the key: when to give up (DEADLINE_EXCEEDED), and a flag
  // that, once set, cancels the compile (UNAVAILABLE).
  absl::Time deadline = absl::InfiniteFuture();
  const std::atomic<bool>* cancelled = nullptr;
};

struct LinkInputData {
  ObjectKind kind = ObjectKind::kLtoir;
  std::string name;  // for nvJitLink's messages
  std::string bytes;
  // Added as NVJITLINK_INPUT_ANY (nvJitLink types it by its bytes; `kind`
  // is only how the store files it).
  bool typed_by_content = false;
};

struct LinkJob {
  std::vector<LinkInputData> inputs;  // in link order
  std::vector<std::string> options;   // canonical (see link_options.h)
  ObjectKind target = ObjectKind::kCubin;
  absl::Time deadline = absl::InfiniteFuture();
  // Options exactly as the caller spelled them, every call's observables
  // recorded (ActionResult::link_trace) and both outputs read; nvJitLink
  // refusing something is part of the trace, not an error.
  bool as_called = false;
  // The source files its PTX inputs name, as the caller's stat saw them
  // (each path once). A link with any runs only where they were laid out
  // (`sources_in_view`: a worker's view, source_stats.h); elsewhere it is
  // the caller's.
  std::vector<SourceStat> sources;
  bool sources_in_view = false;
};

// One run of a registered ptxas (PtxasRequest), in the caller's place: the
// PTX at the path the caller named, the caller's working directory.
struct PtxasJob {
  ToolchainInfo::Library ptxas;  // which one, as the daemon hashed it
  std::string program;           // argv[0]
  std::vector<std::string> arguments;
  std::string ptx;
  std::string working_directory;  // absolute
  std::string input_path;         // absolute, lexically normal
  std::string output_path;        // absolute, lexically normal
  // The sources the PTX names (ptx_sources.h), as the caller's stat saw
  // them; path absolute and lexically normal.
  using Source = SourceStat;
  std::vector<Source> sources;
  absl::Time deadline = absl::InfiniteFuture();
};

// One libNVVM program's calls (an NvvmRequest's, every module's bytes
// there), made to the libNVVM the workers loaded.
struct NvvmJob {
  std::vector<v1::NvvmCall> calls;
  absl::Time deadline = absl::InfiniteFuture();
};

// A compile or link that ran. A program that does not compile is a result too
// (ok == false, with the log); only failures of the machinery are errors.
struct ActionResult {
  bool ok = false;
  std::string object;
  std::string log;
  std::vector<std::pair<std::string, std::string>> lowered_names;
  absl::Duration elapsed;
  // An as-called link's (object: its cubin, when it gave one).
  std::optional<v1::NvJitLinkTrace> link_trace;
  // A ptxas run's (log: its stderr; object: its output file).
  std::optional<v1::PtxasRun> ptxas_run;
  // A libNVVM program's last call (object: its compiled result buffer).
  std::optional<v1::NvvmRun> nvvm_run;
};

// How the compile processes have fared (zero for an in-process compiler).
struct CompilerStats {
  uint64_t workers_started = 0;
  uint64_t crashes = 0;               // died of a signal (not the memory limit)
  uint64_t ended_without_answer = 0;  // the compiler called exit
  uint64_t memory_limited = 0;  // died or failed at --compile_memory_limit
  uint64_t time_limited = 0;    // killed at the compile-time limit
};

// Thread-safety: Compile, Link and Ptxas may be called from many threads at
// once; toolchain() is immutable.
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual absl::StatusOr<ActionResult> Compile(const CompileJob& job) = 0;
  virtual absl::StatusOr<ActionResult> Link(const LinkJob& job) = 0;
  // Only in a confined worker: UNIMPLEMENTED elsewhere, and the caller
  // runs its own ptxas.
  virtual absl::StatusOr<ActionResult> Ptxas(const PtxasJob& /*job*/) {
    return absl::UnimplementedError(
        "ptxas runs only in compile workers (not --in_process_compiles)");
  }
  // Only in a confined worker with a registered libNVVM: UNIMPLEMENTED
  // elsewhere, and the caller runs its own libNVVM.
  virtual absl::StatusOr<ActionResult> Nvvm(const NvvmJob& /*job*/) {
    return absl::UnimplementedError(
        "libNVVM runs only in compile workers (not --in_process_compiles)");
  }
  virtual const ToolchainInfo& toolchain() const = 0;
  virtual CompilerStats stats() const { return {}; }
  // Makes running and later jobs answer UNAVAILABLE (daemon shutdown).
  virtual void CancelAll() {}
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_COMPILER_H_
