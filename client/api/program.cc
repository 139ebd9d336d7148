#include "jitcache/program.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/rpc/code_types.h"
#include "common/compile_options.h"
#include "common/object_kind.h"
#include "jitcache/object_code.h"

namespace jitcache {
namespace {
std::string Bool(bool b) { return b ? "true" : "false"; }
}  // namespace

std::vector<std::string> ProgramOptions::AsNvrtcOptions() const {
  std::vector<std::string> out;
  if (!arch.empty()) out.push_back(absl::StrCat("-arch=", arch));
  if (language_standard)
    out.push_back(absl::StrCat("-std=", *language_standard));
  if (relocatable_device_code) {
    out.push_back(absl::StrCat("-rdc=", Bool(*relocatable_device_code)));
  }
  if (ftz) out.push_back(absl::StrCat("-ftz=", Bool(*ftz)));
  if (prec_div) out.push_back(absl::StrCat("-prec-div=", Bool(*prec_div)));
  if (prec_sqrt) out.push_back(absl::StrCat("-prec-sqrt=", Bool(*prec_sqrt)));
  if (fma) out.push_back(absl::StrCat("-fmad=", Bool(*fma)));
  if (max_register_count) {
    out.push_back(absl::StrCat("-maxrregcount=", *max_register_count));
  }
  if (use_fast_math) out.push_back("-use_fast_math");
  if (debug) out.push_back("-G");
  if (lineinfo) out.push_back("-lineinfo");
  for (const auto& d : define_macro) out.push_back(absl::StrCat("-D", d));
  for (const auto& d : include_path) {
    out.push_back(std::string(kIncludePathOption) + d);
  }
  for (const auto& h : pre_include) out.push_back(absl::StrCat("-include=", h));
  out.insert(out.end(), extra_options.begin(), extra_options.end());
  return out;
}

absl::string_view CodeTypeName(CodeType type) {
  return ObjectKindName(ToObjectKind(type));
}

std::optional<CodeType> ParseCodeType(absl::string_view name) {
  for (CodeType t :
       {CodeType::kPtx, CodeType::kCubin, CodeType::kLtoir, CodeType::kFatbin,
        CodeType::kObject, CodeType::kLibrary, CodeType::kOptixIr}) {
    if (name == CodeTypeName(t)) return t;
  }
  return std::nullopt;
}

std::optional<CodeType> CodeTypeForFile(absl::string_view path) {
  const size_t dot = path.rfind('.');
  if (dot == absl::string_view::npos) return std::nullopt;
  const absl::string_view ext = path.substr(dot + 1);
  if (ext == "o") return CodeType::kObject;
  if (ext == "a") return CodeType::kLibrary;
  if (ext == "lto") return CodeType::kLtoir;
  return ParseCodeType(ext);
}

absl::string_view ServedName(Served served) {
  switch (served) {
    case Served::kHit:
      return "HIT";
    case Served::kMiss:
      return "MISS";
    case Served::kJoined:
      return "JOINED";
    case Served::kLocal:
      return "LOCAL";
  }
  return "UNKNOWN";
}

}  // namespace jitcache
