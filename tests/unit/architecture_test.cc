// The include arrows of ARCHITECTURE.md hold in the tree: the document's
// `layers` block is the rule this test enforces.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = JITCACHE_SOURCE_DIR;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// module -> the modules it may include, from the ```layers block.
std::map<std::string, std::set<std::string>> Layers() {
  const std::string doc = ReadFile(kRoot / "ARCHITECTURE.md");
  const size_t start = doc.find("```layers\n");
  const size_t end = doc.find("```", start + 10);
  EXPECT_NE(start, std::string::npos) << "no ```layers block";
  std::map<std::string, std::set<std::string>> layers;
  if (start == std::string::npos || end == std::string::npos) return layers;
  for (absl::string_view line : absl::StrSplit(
           doc.substr(start + 10, end - start - 10), '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, ':');
    EXPECT_EQ(parts.size(), 2u) << line;
    if (parts.size() != 2) continue;
    std::set<std::string>& allowed = layers[parts[0]];
    for (absl::string_view dep :
         absl::StrSplit(parts[1], ' ', absl::SkipEmpty())) {
      allowed.insert(std::string(dep));
    }
  }
  return layers;
}

// The longest module that `path` (relative to the root) lies in.
std::string ModuleOf(const std::string& path,
                     const std::map<std::string, std::set<std::string>>& l) {
  std::string best;
  for (const auto& [module, unused] : l) {
    if (absl::StartsWith(path, module + "/") && module.size() > best.size()) {
      best = module;
    }
  }
  return best;
}

// What an #include "..." names: a module, "" for third-party headers, or
// the path itself for project code that belongs to no module (tests/...).
std::string IncludedModule(
    const std::string& include,
    const std::map<std::string, std::set<std::string>>& layers) {
  if (absl::StartsWith(include, "jitcache/v1/")) return "proto";
  if (absl::StartsWith(include, "jitcache/")) return "client/include";
  if (std::string m = ModuleOf(include, layers); !m.empty()) return m;
  for (const char* own : {"tests/", "bench/"}) {
    if (absl::StartsWith(include, own)) return include;
  }
  return "";
}

TEST(ArchitectureTest, IncludesFollowTheLayers) {
  const auto layers = Layers();
  ASSERT_GT(layers.size(), 5u);
  for (const auto& [module, allowed] : layers) {
    EXPECT_TRUE(fs::is_directory(kRoot / module))
        << module << " is in ARCHITECTURE.md but not in the tree";
    for (const std::string& dep : allowed) {
      EXPECT_TRUE(layers.count(dep)) << module << " names unknown " << dep;
    }
  }
  const std::regex include_line(R"re(^\s*#\s*include\s+"([^"]+)")re");
  int files = 0, includes = 0;
  std::vector<std::string> violations;
  std::set<std::pair<std::string, std::string>> used;
  for (const char* top : {"proto", "common", "server", "client"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / top)) {
      const std::string ext = entry.path().extension();
      if (ext != ".h" && ext != ".cc" && ext != ".c") continue;
      const std::string path = fs::relative(entry.path(), kRoot).string();
      const std::string module = ModuleOf(path, layers);
      ASSERT_FALSE(module.empty())
          << path << " is in no module of ARCHITECTURE.md";
      ++files;
      std::istringstream lines(ReadFile(entry.path()));
      std::string line;
      std::smatch match;
      while (std::getline(lines, line)) {
        if (!std::regex_search(line, match, include_line)) continue;
        const std::string target = IncludedModule(match[1], layers);
        if (target.empty()) continue;
        ++includes;
        used.insert({module, target});
        if (target == module || layers.at(module).count(target)) continue;
        violations.push_back(path + ": #include \"" + match[1].str() + "\" (" +
                             module + " may not include " + target + ")");
      }
    }
  }
  std::printf("%d files, %d project includes checked\n", files, includes);
  EXPECT_GT(files, 100);
  std::string all;
  for (const std::string& v : violations) all += v + "\n";
  EXPECT_TRUE(violations.empty()) << all;
  // Every arrow the block allows is one the code uses: an arrow kept "just
  // in case" would let a new coupling in unseen.
  std::string unused;
  for (const auto& [module, allowed] : layers) {
    for (const std::string& dep : allowed) {
      if (!used.count({module, dep})) {
        unused += module + " -> " + dep + "\n";
      }
    }
  }
  EXPECT_TRUE(unused.empty())
      << "arrows in ARCHITECTURE.md that no include uses:\n"
      << unused;
}

}  // namespace
}  // namespace jitcache
