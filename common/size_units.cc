#include "common/size_units.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace jitcache {

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not a size (e.g. 4096, 500M, 20G, 1.5GiB)"));
  };
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t digits = 0;
  while (digits < s.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(s[digits])) ||
          s[digits] == '.')) {
    ++digits;
  }
  double number = 0;
  if (digits == 0 || !absl::SimpleAtod(s.substr(0, digits), &number)) {
    return bad();
  }
  std::string unit = absl::AsciiStrToUpper(s.substr(digits));
  if (unit.size() > 1 && (absl::EndsWith(unit, "IB"))) {
    unit.resize(unit.size() - 2);
  } else if (unit.size() > 1 && unit.back() == 'B') {
    unit.pop_back();
  }
  double scale = 1;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K") {
    scale = 1024.0;
  } else if (unit == "M") {
    scale = 1024.0 * 1024;
  } else if (unit == "G") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else {
    return bad();
  }
  const double bytes = number * scale;
  if (!std::isfinite(bytes) || bytes > 9.0e18) return bad();
  return static_cast<uint64_t>(bytes);
}

std::string FormatSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.1f %s", v, kUnits[unit]);
}

absl::StatusOr<absl::Duration> ParseAge(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  absl::Duration d;
  if (!s.empty() && (s.back() == 'd' || s.back() == 'w')) {
    double n = 0;
    if (absl::SimpleAtod(s.substr(0, s.size() - 1), &n) && n >= 0) {
      return absl::Hours(n * (s.back() == 'd' ? 24 : 24 * 7));
    }
  } else if (absl::ParseDuration(s, &d) && d >= absl::ZeroDuration()) {
    return d;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", text, "' is not a duration (e.g. 90s, 30m, 12h, 7d, 2w)"));
}

}  // namespace jitcache
