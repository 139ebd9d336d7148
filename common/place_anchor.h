#ifndef JITCACHE_COMMON_PLACE_ANCHOR_H_
#define JITCACHE_COMMON_PLACE_ANCHOR_H_

// Paths as opened ("spelled": absolute, ".." kept, as the kernel resolves
// them), made relative to a compile's place (compile_place.h) so that what a
// scan found in one place can be looked for in another with the same
// layout: a new working directory, a new temporary program name.
//
// Moving the place moves a spelled path with it only when the path begins
// in one of the place's two directories and never climbs out of it (then
// it is "P:rest" or "C:rest"; where one directory lies in the other, the
// outer one may hold a path that leaves the inner one), or touches neither
// of them on its way (then it stays as it is). Anything else (a ".." out of
// the working directory, an absolute path into it) has no anchored form:
// what it names elsewhere is not what moving would say. The layout of the
// two directories must be the same in both places (a key holds it).
//
// Only the standard library (the `jitcache` front end uses it); pure, any
// thread.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

// The anchored forms' prefixes, the one definition (compile_place.cc keys
// with them too): below the program's directory, below the working
// directory, and the program's own file.
inline constexpr std::string_view kProgramAnchor = "P:";
inline constexpr std::string_view kCwdAnchor = "C:";
inline constexpr std::string_view kProgramFileAnchor = "F:";

// The directory part of `path` ("" for a bare name, "/" for "/x") and its
// last part (all of a bare name).
std::string_view DirPart(std::string_view path);
std::string_view BasePart(std::string_view path);

struct PlaceRoots {
  std::string program_dir;  // absolute, lexically normal
  std::string cwd;          // absolute, lexically normal
};

// The roots of a compile in `cwd` of a program named `program_name` (a
// relative name is relative to `cwd`), as compile_place.h has them; nullopt
// when either is "/" or `cwd` is not absolute and normal (nothing could be
// moved without moving everything).
std::optional<PlaceRoots> MovableRoots(std::string_view cwd,
                                       std::string_view program_name);

// `spelled` in anchored form, or nullopt as said above.
std::optional<std::string> AnchorSpelled(const PlaceRoots& roots,
                                         std::string_view spelled);

// The spelled path an anchored one is at `roots`: the inverse of
// AnchorSpelled for the same roots.
std::string UnanchorSpelled(const PlaceRoots& roots, std::string_view anchored);

// Whether `path` (absolute, normal) lies outside both roots and above one
// of them: a search directory there would reach the place by a path that
// does not move with it.
bool HoldsARoot(const PlaceRoots& roots, std::string_view path);

// The directories an open of `spelled` (absolute) goes through before each
// "..", lexically normal: they must exist for the open to find anything.
std::vector<std::string> DirectoriesBeforeDotDot(std::string_view spelled);

// `path` with "." and ".." resolved by text; absolute stays absolute ("/.."
// is "/"), a relative one keeps the ".." that climb above its start.
std::string LexicallyNormal(std::string_view path);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PLACE_ANCHOR_H_
