#ifndef JITCACHE_COMMON_ABSL_VIEW_H_
#define JITCACHE_COMMON_ABSL_VIEW_H_

// Between std::string_view (the plain C++ code's: common/text.h) and
// absl::string_view, which this Abseil build keeps a type of its own.
#include <string_view>

#include "absl/strings/string_view.h"

namespace jitcache {

inline absl::string_view AbslView(std::string_view s) {
  return {s.data(), s.size()};
}
inline std::string_view StdView(absl::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace jitcache

#endif  // JITCACHE_COMMON_ABSL_VIEW_H_
