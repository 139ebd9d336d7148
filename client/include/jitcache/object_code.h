#ifndef JITCACHE_CLIENT_OBJECT_CODE_H_
#define JITCACHE_CLIENT_OBJECT_CODE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jitcache/code_type.h"
#include "jitcache/object_bytes.h"

namespace jitcache {

class Library;

absl::string_view CodeTypeName(CodeType type);  // "ptx", "cubin", ...
// By name ("ptx", "ltoir", ...) or by file extension (".ltoir", ".o", ...).
std::optional<CodeType> ParseCodeType(absl::string_view name);
std::optional<CodeType> CodeTypeForFile(absl::string_view path);

// How a result was produced.
enum class Served { kHit, kMiss, kJoined, kLocal };
absl::string_view ServedName(Served served);

// The result of a compile or link: the object, or (when compiled is false)
// the log that says why there is none. A value type; not synchronised.
struct ObjectCode {
  bool compiled = false;
  // A large hit's are the daemon's sealed answer file, mapped: no copy.
  ObjectBytes bytes;
  CodeType code_type = CodeType::kPtx;
  std::string name;  // program name
  std::string log;
  // Name expression -> lowered (mangled) symbol, on a hit as on a miss.
  std::map<std::string, std::string> symbol_mapping;
  Served served = Served::kMiss;
  std::string cache_key;        // hex
  std::string object_digest;    // hex; empty without an object
  int64_t compile_time_us = 0;  // time the compile took when it ran
  // The daemon took it from its cluster tier instead of compiling it.
  bool served_remotely = false;
  // A miss answered while the daemon still proved whether its answer
  // depends on the caller's place: cache_key is this place's key; once
  // the proof ends, a hit may name the key every place shares instead.
  bool proof_pending = false;

  // Loads the object through the driver (see jitcache/library.h, which
  // callers include): Library::Load(*this).
  absl::StatusOr<Library> Load() const;
};

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_OBJECT_CODE_H_
