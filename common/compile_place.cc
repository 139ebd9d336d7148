#include "common/compile_place.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/paths.h"

namespace jitcache {
namespace {

constexpr absl::string_view kCwdAnchor = "C:";

// paths.h speaks std::string_view; Abseil's is its own type here.
std::string_view Std(absl::string_view s) { return {s.data(), s.size()}; }
bool Under(absl::string_view path, absl::string_view dir, bool or_equal) {
  return IsUnder(Std(path), Std(dir), or_equal);
}
constexpr absl::string_view kProgramAnchor = "P:";

absl::string_view DirPart(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::string_view BasePart(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// `path` below `dir` (both normal, `path` under or equal to `dir`).
absl::string_view Below(absl::string_view path, absl::string_view dir) {
  if (path == dir) return "";
  return path.substr(dir == "/" ? 1 : dir.size() + 1);
}

}  // namespace

std::string JoinLexically(absl::string_view dir, absl::string_view name) {
  std::vector<absl::string_view> parts;
  auto add = [&](absl::string_view path) {
    for (absl::string_view part : absl::StrSplit(path, '/')) {
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
        continue;
      }
      parts.push_back(part);
    }
  };
  if (!absl::StartsWith(name, "/")) add(dir);
  add(name);
  std::string out;
  for (absl::string_view part : parts) absl::StrAppend(&out, "/", part);
  return out.empty() ? "/" : out;
}

CompilePlace::CompilePlace(absl::string_view cwd,
                           absl::string_view program_name)
    : given_cwd_(cwd),
      cwd_(cwd.empty() ? "/" : std::string(cwd)),
      program_name_(program_name),
      program_dir_(JoinLexically(cwd_, DirPart(program_name))) {
  if (IsUnder(program_dir_, cwd_, /*or_equal=*/true)) {
    layout_ = Layout::kProgramInCwd;
  } else if (IsUnder(cwd_, program_dir_, /*or_equal=*/false)) {
    layout_ = Layout::kCwdInProgram;
  } else {
    layout_ = Layout::kApart;
  }
}

std::string CompilePlace::Anchored(absl::string_view path) const {
  const bool cwd_anchor = layout_ != Layout::kCwdInProgram;
  const bool program_anchor = layout_ != Layout::kProgramInCwd;
  if (program_anchor && Under(path, program_dir_, /*or_equal=*/true)) {
    return absl::StrCat(kProgramAnchor, Below(path, program_dir_));
  }
  if (cwd_anchor && Under(path, cwd_, /*or_equal=*/true)) {
    return absl::StrCat(kCwdAnchor, Below(path, cwd_));
  }
  return std::string(path);
}

std::optional<std::string> CompilePlace::Absolute(
    absl::string_view anchored) const {
  const bool cwd_anchor = layout_ != Layout::kCwdInProgram;
  const bool program_anchor = layout_ != Layout::kProgramInCwd;
  absl::string_view below = anchored;
  if (absl::ConsumePrefix(&below, kCwdAnchor)) {
    if (!cwd_anchor || absl::StartsWith(below, "/")) return std::nullopt;
    return below.empty() ? cwd_ : JoinLexically(cwd_, below);
  }
  if (absl::ConsumePrefix(&below, kProgramAnchor)) {
    if (!program_anchor || absl::StartsWith(below, "/")) return std::nullopt;
    return below.empty() ? program_dir_ : JoinLexically(program_dir_, below);
  }
  if (!IsNormalAbsolutePath(Std(anchored))) return std::nullopt;
  return std::string(anchored);
}

std::string CompilePlace::ProgramForKey() const {
  std::string out;
  switch (layout_) {
    case Layout::kProgramInCwd:
      out = absl::StrCat("in-cwd ", Anchored(program_dir_));
      break;
    case Layout::kCwdInProgram:
      out = absl::StrCat("cwd-in-program ", Anchored(cwd_));
      break;
    case Layout::kApart:
      out = "apart";
      break;
  }
  // A relative name is relative to the working directory: place-free as
  // spelled. An absolute one is anchored where its directory is.
  const std::string name = absl::StartsWith(program_name_, "/")
                               ? Anchored(program_name_)
                               : absl::StrCat("rel:", program_name_);
  absl::StrAppend(&out, "\n", name);
  return out;
}

std::optional<CompilePlace> CompilePlace::Elsewhere(
    const std::vector<std::string>& anchored_files) const {
  const std::string cwd_there = absl::StrCat(kElsewhereRoot, "/w0rk/d1r");
  const std::string program_there = absl::StrCat(kElsewhereRoot, "/pr0g");
  const bool absolute_name = absl::StartsWith(program_name_, "/");
  std::string cwd, name = program_name_;
  switch (layout_) {
    case Layout::kProgramInCwd:
      cwd = cwd_there;
      if (absolute_name) {
        name = JoinLexically(cwd, Below(program_name_, cwd_));
      }
      break;
    case Layout::kCwdInProgram:
      cwd = JoinLexically(program_there, Below(cwd_, program_dir_));
      if (absolute_name) {
        name = absl::StrCat(program_there, "/", BasePart(program_name_));
      }
      break;
    case Layout::kApart:
      cwd = cwd_there;
      if (absolute_name) {
        name = absl::StrCat(program_there, "/", BasePart(program_name_));
      }
      break;
  }
  CompilePlace there(cwd, name);
  if (there.layout_ != layout_ || there.ProgramForKey() != ProgramForKey()) {
    return std::nullopt;
  }
  for (const std::string& anchored : anchored_files) {
    std::optional<std::string> path = there.Absolute(anchored);
    if (!path.has_value() || there.Anchored(*path) != anchored ||
        Under(*path, kElsewhereRoot, /*or_equal=*/true) !=
            !absl::StartsWith(anchored, "/")) {
      return std::nullopt;
    }
  }
  return there;
}

}  // namespace jitcache
