#ifndef JITCACHE_COMMON_CACHE_KEY_H_
#define JITCACHE_COMMON_CACHE_KEY_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/digest.h"
#include "common/object_kind.h"
#include "common/sha256.h"

namespace jitcache {

// Bumped whenever the fields below or their encoding change, so that an old
// store can never answer a request under a new meaning.
inline constexpr uint32_t kKeySchemaVersion = 4;

enum class RequestKind : uint32_t {
  kCompile = 1,
  kLink = 2,
  kIncludedSet = 3,
  kAsCalledLink = 4,
  kPtxas = 5,
  kPlacedCompile = 6,
  kNvvm = 7,
  kNamedCompile = 8,
};

// Everything that decides the output of one NVRTC compile. Views only: the
// caller keeps the data alive while the key is computed.
struct CompileKeyInput {
  std::string_view toolchain_fingerprint;
  ObjectKind target = ObjectKind::kPtx;
  std::string_view arch;  // "" when the toolchain's default applies
  // Canonical options (see CanonicalizeCompileOptions), in the order NVRTC
  // receives them; the canonical form already fixed what order may change.
  std::span<const std::string> options;
  // CompilePlace::ProgramWithoutNameForKey: the name's extension and the
  // layout of its place, without the place or the name itself (the name
  // goes into ComputeNamedCompileKey where the answer shows it).
  std::string_view program;
  std::string_view source;
  // Any order: the key sorts them by name. Names must be unique.
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  // Any order, duplicates allowed: the key uses the sorted set.
  std::vector<std::string_view> name_expressions;
  // The files the program may read outside the toolkit, as the
  // IncludedSetDigest of their anchored paths (compile_place.h). Only a
  // request that resolved its includes has this field in its key.
  bool includes_resolved = false;
  Digest included_set;
  // Only the options' include directories are searched (no toolkit ones
  // added); in the key only when set.
  bool exact_include_path = false;
};

// The place-free key: shared by every place with the same layout, and
// answered from there when the real NVRTC's answer does not depend on the
// place (the record says which).
Digest ComputeCompileKey(const CompileKeyInput& input);

// The key of a compile whose answer depends on its place: the place-free
// key and the place itself (the working directory as given, the program's
// name, and the modification time of each file the request carries, in the
// order of their anchored paths; their sizes are in the place-free key).
struct PlacedCompileKeyInput {
  Digest place_free;
  std::string_view working_directory;
  std::string_view program_name;
  std::span<const int64_t> file_mtimes_ns;
  // The answer depends on the working directory alone (not on the
  // program's directory nor the files' times): only it is keyed, and
  // `program_name` and `file_mtimes_ns` are left out.
  bool working_directory_only = false;
  // The answer depends on the place but not on the files' times (a header
  // spelled by its absolute path inside the place): `file_mtimes_ns` is
  // left out.
  bool without_file_times = false;
};

Digest ComputePlacedCompileKey(const PlacedCompileKeyInput& input);

// The key of a compile whose answer depends on its program's name alone:
// the place-free key (which holds no name) and CompilePlace::ProgramForKey.
// Derived from the place-free key, so that a request's keys hash its
// source and headers once.
Digest ComputeNamedCompileKey(const Digest& place_free,
                              std::string_view program_for_key);

// One digest for a set of included files (path, raw SHA-256 of the bytes),
// in any order: what a client sends instead of the list when it hopes for
// a hit, and what the daemon checks the list against on a miss.
Digest IncludedSetDigest(
    std::vector<std::pair<std::string_view, std::string_view>> files);

// Everything that decides the output of one nvJitLink link: the inputs by
// content (digest) and kind, in order. Input names are left out: they only
// label nvJitLink's messages.
struct LinkKeyInput {
  std::string_view toolchain_fingerprint;
  ObjectKind target = ObjectKind::kCubin;
  std::span<const std::string> options;  // canonical (link_options.h)
  std::vector<std::pair<ObjectKind, Digest>> inputs;
};

Digest ComputeLinkKey(const LinkKeyInput& input);

// nvJitLink's C API as a caller drove it (libnvJitLink.so.13): the options
// as spelled and the inputs with their names, in call order. `complete`
// tells a whole link from its first steps (nvJitLinkCreate and these
// inputs' nvJitLinkAddData calls), whose answers are recorded under their
// own keys. The names are keyed only where the answer shows them (some of
// nvJitLink's messages name an input): `names_keyed` false leaves them
// out, and such a key never equals one with names.
// What the caller's stat says of a source file PTX names (ptx_sources.h):
// nvJitLink and ptxas write its size and time into line information.
struct SourceStatKey {
  std::string_view path;
  bool exists = false;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

struct AsCalledLinkKeyInput {
  std::string_view toolchain_fingerprint;
  std::span<const std::string> options;
  struct Input {
    ObjectKind kind;
    Digest digest;
    std::string_view name;
    // Added as NVJITLINK_INPUT_ANY (nvJitLink types it by its bytes).
    bool typed_by_content = false;
    // PTX that names source files: what the caller's stat says of each
    // (PtxasKeyInput::Source); in the key only when there are some.
    std::span<const SourceStatKey> sources;
  };
  std::span<const Input> inputs;
  bool complete = false;
  bool names_keyed = true;
};

Digest ComputeAsCalledLinkKey(const AsCalledLinkKeyInput& input);

// One run of a registered ptxas binary (jitcache-ptxas): the binary's
// content hash, its command line as spelled (argv[0] too: ptxas names
// itself in its messages) and the PTX. The file names and the working
// directory are part of the key only when the answer showed them
// (`names` set); otherwise the arguments hold markers in their place
// (PtxasCommand::WithoutNames).
struct PtxasKeyInput {
  std::string_view ptxas_fingerprint;  // raw SHA-256 of the binary
  std::string_view program;            // argv[0]
  std::span<const std::string> arguments;
  std::string_view ptx;
  struct Names {
    std::string_view input, output;
    // The names' last parts alone: for an answer that shows those and not
    // the directories the caller spelled (ptxas -g embeds the base name).
    bool base_names_only = false;
  };
  std::optional<Names> names;
  // What the caller's stat says of each source the PTX names.
  using Source = SourceStatKey;
  std::span<const Source> sources;
};

Digest ComputePtxasKey(const PtxasKeyInput& input);

// One libNVVM program as libnvvm.so.4 was called: the library's content
// hash and every call that shapes the program, in order (modules by the
// digest of their bytes, with their names; compiles and verifies with
// their options as spelled). libNVVM reads nothing else: no file, no
// working directory (an strace of its compiles shows none), and the
// environment it reads is the caller's own business (libnvvm.so.4 does not
// use the daemon when any of it is set).
struct NvvmKeyInput {
  std::string_view libnvvm_fingerprint;  // raw SHA-256 of the library
  struct Call {
    int kind = 0;  // v1::NvvmCallKind
    std::string_view name;
    bool unnamed = false;
    std::string_view module_digest;  // raw SHA-256
    std::span<const std::string> options;
  };
  std::span<const Call> calls;
};

Digest ComputeNvvmKey(const NvvmKeyInput& input);

// Builds a key from length-prefixed, tagged fields, so that no two different
// field sequences can produce the same byte stream.
class KeyHasher {
 public:
  explicit KeyHasher(RequestKind kind);

  void Field(uint32_t tag, std::string_view value);
  void Count(uint32_t tag, uint64_t count);
  Digest Finish() { return Digest{hasher_.Finish()}; }

 private:
  void U64(uint64_t v);

  Sha256 hasher_;
};

}  // namespace jitcache

#endif  // JITCACHE_COMMON_CACHE_KEY_H_
