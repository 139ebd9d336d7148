#include "common/place_anchor.h"

#include <utility>
#include <vector>

#include "common/paths.h"

namespace jitcache {
namespace {

// The part of `spelled` after `root` when it begins there (as text: a
// root of its own, then '/'); nullopt otherwise.
std::optional<std::string_view> After(std::string_view spelled,
                                      std::string_view root) {
  if (spelled == root) return std::string_view();
  if (spelled.size() > root.size() && spelled.substr(0, root.size()) == root &&
      spelled[root.size()] == '/') {
    return spelled.substr(root.size() + 1);
  }
  return std::nullopt;
}

}  // namespace

std::string_view DirPart(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string_view BasePart(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string LexicallyNormal(std::string_view path) {
  const bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string_view> parts;
  size_t at = 0;
  while (at <= path.size()) {
    size_t end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(at, end - at);
    at = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(part);
      }
      continue;
    }
    parts.push_back(part);
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out.empty() ? "." : out;
}

std::optional<PlaceRoots> MovableRoots(std::string_view cwd,
                                       std::string_view program_name) {
  if (!IsNormalAbsolutePath(cwd) || cwd == "/" || program_name.empty()) {
    return std::nullopt;
  }
  PlaceRoots roots;
  roots.cwd = std::string(cwd);
  const std::string_view dir = DirPart(program_name);
  roots.program_dir =
      program_name[0] == '/'
          ? LexicallyNormal(dir)
          : LexicallyNormal(dir.empty() ? roots.cwd
                                        : roots.cwd + "/" + std::string(dir));
  if (roots.program_dir == "/") return std::nullopt;
  return roots;
}

std::optional<std::string> AnchorSpelled(const PlaceRoots& roots,
                                         std::string_view spelled) {
  if (spelled.empty() || spelled[0] != '/') return std::nullopt;
  // The program's directory first (as CompilePlace::Anchored), then the
  // working directory: where one lies in the other, at the same place in
  // both places (the layout is keyed), a path that leaves the inner one
  // but stays in the outer one moves with the outer one.
  bool in_a_root = false;
  for (const auto& [root, anchor] :
       {std::pair<std::string_view, std::string_view>{roots.program_dir,
                                                      kProgramAnchor},
        {roots.cwd, kCwdAnchor}}) {
    const std::optional<std::string_view> rest = After(spelled, root);
    if (!rest.has_value()) continue;
    in_a_root = true;
    const std::string below = LexicallyNormal(*rest);
    if (below == ".." || below.substr(0, 3) == "../") continue;
    return std::string(anchor) + std::string(*rest);
  }
  if (in_a_root) return std::nullopt;
  // Touches neither root: the same path wherever the place is, unless it
  // climbs into one.
  const std::string normal = LexicallyNormal(spelled);
  if (IsUnder(normal, roots.program_dir, /*or_equal=*/true) ||
      IsUnder(normal, roots.cwd, /*or_equal=*/true)) {
    return std::nullopt;
  }
  return std::string(spelled);
}

std::string UnanchorSpelled(const PlaceRoots& roots,
                            std::string_view anchored) {
  std::string_view root;
  if (anchored.substr(0, 2) == kProgramAnchor) {
    root = roots.program_dir;
  } else if (anchored.substr(0, 2) == kCwdAnchor) {
    root = roots.cwd;
  } else {
    return std::string(anchored);
  }
  const std::string_view rest = anchored.substr(2);
  if (rest.empty()) return std::string(root);
  return std::string(root) + "/" + std::string(rest);
}

std::vector<std::string> DirectoriesBeforeDotDot(std::string_view spelled) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = spelled.find("..", at)) != std::string_view::npos) {
    const bool starts = at == 0 || spelled[at - 1] == '/';
    const bool ends = at + 2 == spelled.size() || spelled[at + 2] == '/';
    if (starts && ends && at > 0) {
      out.push_back(LexicallyNormal(spelled.substr(0, at)));
    }
    at += 2;
  }
  return out;
}

bool HoldsARoot(const PlaceRoots& roots, std::string_view path) {
  if (IsUnder(path, roots.program_dir, /*or_equal=*/true) ||
      IsUnder(path, roots.cwd, /*or_equal=*/true)) {
    return false;  // moves with its root
  }
  return IsUnder(roots.program_dir, path, /*or_equal=*/false) ||
         IsUnder(roots.cwd, path, /*or_equal=*/false);
}

}  // namespace jitcache
