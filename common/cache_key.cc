#include "common/cache_key.h"

#include <algorithm>
#include <string_view>

#include "common/little_endian.h"

namespace jitcache {
namespace {

// Field tags of the compile key. Values are part of the key: never reuse.
enum CompileTag : uint32_t {
  kTagSchema = 1,
  kTagKind = 2,
  kTagToolchain = 3,
  kTagTarget = 4,
  kTagArch = 5,
  kTagOptions = 6,
  kTagOption = 7,
  kTagProgramName = 8,
  kTagSource = 9,
  kTagHeaders = 10,
  kTagHeaderName = 11,
  kTagHeaderBody = 12,
  kTagNameExpressions = 13,
  kTagNameExpression = 14,
  kTagIncludedSet = 15,
  kTagExactIncludePath = 16,
  kTagWorkingDirectory = 17,
  kTagPlaceFree = 18,
  kTagFileTimes = 19,
  kTagFileTime = 20,
  kTagWorkingDirectoryOnly = 21,
  kTagWithoutFileTimes = 22,
};

// Field tags of an included set.
enum IncludedSetTag : uint32_t {
  kSetTagFiles = 1,
  kSetTagPath = 2,
  kSetTagDigest = 3,
};

// Field tags of the link key.
enum LinkTag : uint32_t {
  kLinkTagToolchain = 3,
  kLinkTagTarget = 4,
  kLinkTagOptions = 6,
  kLinkTagOption = 7,
  kLinkTagInputs = 20,
  kLinkTagInputKind = 21,
  kLinkTagInputDigest = 22,
  kLinkTagInputName = 23,
  kLinkTagComplete = 24,
  kLinkTagNamesLeftOut = 25,
  kLinkTagInputExtension = 26,
  kLinkTagSourceStatsRefused = 27,
  kLinkTagInputTypedByContent = 28,
  kLinkTagSources = 29,
  kLinkTagSource = 42,
  kLinkTagSourceStat = 43,
};

// Field tags of the ptxas key.
enum PtxasTag : uint32_t {
  kPtxasTagBinary = 30,
  kPtxasTagProgram = 31,
  kPtxasTagArguments = 32,
  kPtxasTagArgument = 33,
  kPtxasTagPtx = 34,
  kPtxasTagInputName = 35,
  kPtxasTagOutputName = 36,
  // 37 was the working directory's: never reused.
  kPtxasTagSources = 38,
  kPtxasTagSource = 39,
  kPtxasTagSourceStat = 40,
  kPtxasTagBaseNamesOnly = 41,
};

// Field tags of the libNVVM key.
enum NvvmTag : uint32_t {
  kNvvmTagLibrary = 50,
  kNvvmTagCalls = 51,
  kNvvmTagCallKind = 52,
  kNvvmTagName = 53,
  kNvvmTagUnnamed = 54,
  kNvvmTagModule = 55,
  kNvvmTagOptions = 56,
  kNvvmTagOption = 57,
};

// The extension of an input's name ("" for none): ".o" of "/a/k.o".
std::string_view NameExtension(std::string_view name) {
  const size_t slash = name.rfind('/');
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos ||
      (slash != std::string_view::npos && dot < slash)) {
    return "";
  }
  return name.substr(dot);
}

}  // namespace

KeyHasher::KeyHasher(RequestKind kind) {
  Count(kTagSchema, kKeySchemaVersion);
  Count(kTagKind, static_cast<uint32_t>(kind));
}

void KeyHasher::U64(uint64_t v) {
  char bytes[8];
  le::Put<uint64_t>(bytes, v);
  hasher_.Update(bytes, sizeof(bytes));
}

void KeyHasher::Field(uint32_t tag, std::string_view value) {
  U64(tag);
  U64(value.size());
  hasher_.Update(value);
}

void KeyHasher::Count(uint32_t tag, uint64_t count) {
  U64(tag);
  U64(count);
}

Digest ComputeCompileKey(const CompileKeyInput& input) {
  KeyHasher key(RequestKind::kCompile);
  key.Field(kTagToolchain, input.toolchain_fingerprint);
  key.Count(kTagTarget, static_cast<uint64_t>(input.target));
  key.Field(kTagArch, input.arch);
  key.Count(kTagOptions, input.options.size());
  for (const std::string& option : input.options) key.Field(kTagOption, option);
  key.Field(kTagProgramName, input.program);
  key.Field(kTagSource, input.source);

  auto headers = input.headers;
  std::sort(headers.begin(), headers.end());
  key.Count(kTagHeaders, headers.size());
  for (const auto& [name, body] : headers) {
    key.Field(kTagHeaderName, name);
    key.Field(kTagHeaderBody, body);
  }

  auto names = input.name_expressions;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  key.Count(kTagNameExpressions, names.size());
  for (std::string_view name : names) key.Field(kTagNameExpression, name);

  if (input.includes_resolved) {
    key.Field(kTagIncludedSet, input.included_set.AsBytes());
  }
  if (input.exact_include_path) key.Count(kTagExactIncludePath, 1);
  return key.Finish();
}

Digest ComputeNamedCompileKey(const Digest& place_free,
                              std::string_view program_for_key) {
  KeyHasher key(RequestKind::kNamedCompile);
  key.Field(kTagPlaceFree, place_free.AsBytes());
  key.Field(kTagProgramName, program_for_key);
  return key.Finish();
}

Digest ComputePlacedCompileKey(const PlacedCompileKeyInput& input) {
  KeyHasher key(RequestKind::kPlacedCompile);
  key.Field(kTagPlaceFree, input.place_free.AsBytes());
  key.Field(kTagWorkingDirectory, input.working_directory);
  if (input.working_directory_only) {
    key.Count(kTagWorkingDirectoryOnly, 1);
    return key.Finish();
  }
  key.Field(kTagProgramName, input.program_name);
  if (input.without_file_times) {
    key.Count(kTagWithoutFileTimes, 1);
    return key.Finish();
  }
  key.Count(kTagFileTimes, input.file_mtimes_ns.size());
  for (int64_t mtime : input.file_mtimes_ns) {
    key.Count(kTagFileTime, static_cast<uint64_t>(mtime));
  }
  return key.Finish();
}

Digest IncludedSetDigest(
    std::vector<std::pair<std::string_view, std::string_view>> files) {
  std::sort(files.begin(), files.end());
  KeyHasher set(RequestKind::kIncludedSet);
  set.Count(kSetTagFiles, files.size());
  for (const auto& [path, digest] : files) {
    set.Field(kSetTagPath, path);
    set.Field(kSetTagDigest, digest);
  }
  return set.Finish();
}

Digest ComputeLinkKey(const LinkKeyInput& input) {
  KeyHasher key(RequestKind::kLink);
  key.Field(kLinkTagToolchain, input.toolchain_fingerprint);
  key.Count(kLinkTagTarget, static_cast<uint64_t>(input.target));
  key.Count(kLinkTagOptions, input.options.size());
  for (const std::string& option : input.options) {
    key.Field(kLinkTagOption, option);
  }
  key.Count(kLinkTagInputs, input.inputs.size());
  for (const auto& [kind, digest] : input.inputs) {
    key.Count(kLinkTagInputKind, static_cast<uint64_t>(kind));
    key.Field(kLinkTagInputDigest, digest.AsBytes());
  }
  return key.Finish();
}

Digest ComputeAsCalledLinkKey(const AsCalledLinkKeyInput& input) {
  KeyHasher key(RequestKind::kAsCalledLink);
  key.Field(kLinkTagToolchain, input.toolchain_fingerprint);
  key.Count(kLinkTagOptions, input.options.size());
  for (const std::string& option : input.options) {
    key.Field(kLinkTagOption, option);
  }
  key.Count(kLinkTagInputs, input.inputs.size());
  for (const AsCalledLinkKeyInput::Input& in : input.inputs) {
    key.Count(kLinkTagInputKind, static_cast<uint64_t>(in.kind));
    key.Field(kLinkTagInputDigest, in.digest.AsBytes());
    if (in.typed_by_content) key.Count(kLinkTagInputTypedByContent, 1);
    // (Only an input that names sources has them: other keys are as they
    // were.)
    if (!in.sources.empty()) {
      key.Count(kLinkTagSources, in.sources.size());
      for (const SourceStatKey& source : in.sources) {
        key.Field(kLinkTagSource, source.path);
        key.Count(kLinkTagSourceStat, source.exists ? 1 : 0);
        key.Count(kLinkTagSourceStat, source.size);
        key.Count(kLinkTagSourceStat, static_cast<uint64_t>(source.mtime_ns));
      }
    }
    if (input.names_keyed) {
      key.Field(kLinkTagInputName, in.name);
    } else {
      // The extension is kept even so: what nvJitLink makes of an input
      // may follow it, and the proof keeps it.
      key.Field(kLinkTagInputExtension, NameExtension(in.name));
    }
  }
  key.Count(kLinkTagComplete, input.complete ? 1 : 0);
  // Only a key without names says so: keys with names are as they were.
  if (!input.names_keyed) key.Count(kLinkTagNamesLeftOut, 1);
  // Records of links made before the daemon refused those that stat
  // source files may hold another place's source times: never hit.
  key.Count(kLinkTagSourceStatsRefused, 1);
  return key.Finish();
}

Digest ComputePtxasKey(const PtxasKeyInput& input) {
  KeyHasher key(RequestKind::kPtxas);
  key.Field(kPtxasTagBinary, input.ptxas_fingerprint);
  key.Field(kPtxasTagProgram, input.program);
  key.Count(kPtxasTagArguments, input.arguments.size());
  for (const std::string& argument : input.arguments) {
    key.Field(kPtxasTagArgument, argument);
  }
  key.Field(kPtxasTagPtx, input.ptx);
  if (input.names.has_value()) {
    key.Field(kPtxasTagInputName, input.names->input);
    key.Field(kPtxasTagOutputName, input.names->output);
    // Only a key of base names says so: keys of names are as they were.
    if (input.names->base_names_only) key.Count(kPtxasTagBaseNamesOnly, 1);
  }
  key.Count(kPtxasTagSources, input.sources.size());
  for (const PtxasKeyInput::Source& source : input.sources) {
    key.Field(kPtxasTagSource, source.path);
    key.Count(kPtxasTagSourceStat, source.exists ? 1 : 0);
    key.Count(kPtxasTagSourceStat, source.size);
    key.Count(kPtxasTagSourceStat, static_cast<uint64_t>(source.mtime_ns));
  }
  return key.Finish();
}

Digest ComputeNvvmKey(const NvvmKeyInput& input) {
  KeyHasher key(RequestKind::kNvvm);
  key.Field(kNvvmTagLibrary, input.libnvvm_fingerprint);
  key.Count(kNvvmTagCalls, input.calls.size());
  for (const NvvmKeyInput::Call& call : input.calls) {
    key.Count(kNvvmTagCallKind, static_cast<uint64_t>(call.kind));
    key.Field(kNvvmTagName, call.name);
    key.Count(kNvvmTagUnnamed, call.unnamed ? 1 : 0);
    key.Field(kNvvmTagModule, call.module_digest);
    key.Count(kNvvmTagOptions, call.options.size());
    for (const std::string& option : call.options) {
      key.Field(kNvvmTagOption, option);
    }
  }
  return key.Finish();
}

}  // namespace jitcache
