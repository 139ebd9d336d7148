#include "server/engine/user_stats.h"

#include <pwd.h>

#include <algorithm>
#include <string>

namespace jitcache {

UserStats::Counters& UserStats::For(uid_t uid) {
  {
    absl::ReaderMutexLock lock(&mu_);
    if (auto it = users_.find(uid); it != users_.end()) return it->second;
  }
  absl::MutexLock lock(&mu_);
  return users_[uid];
}

std::vector<v1::UserStats> UserStats::Read(
    const std::vector<std::pair<uid_t, size_t>>& queued,
    std::optional<uid_t> only) const {
  std::vector<v1::UserStats> rows;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [uid, c] : users_) {
      if (only.has_value() && uid != *only) continue;
      v1::UserStats& row = rows.emplace_back();
      row.set_uid(uid);
      row.set_requests(c.requests);
      row.set_hits(c.hits);
      row.set_misses(c.misses);
      row.set_joins(c.joins);
      row.set_rejected(c.rejected);
      row.set_compile_seconds(c.compile_us / 1e6);
    }
  }
  for (v1::UserStats& row : rows) {
    row.set_name(UserName(row.uid()));
    for (const auto& [uid, n] : queued) {
      if (uid == row.uid()) row.set_queued(n);
    }
  }
  std::sort(rows.begin(), rows.end(),
            [](const v1::UserStats& a, const v1::UserStats& b) {
              return a.uid() < b.uid();
            });
  return rows;
}

void UserStats::Zero() {
  absl::ReaderMutexLock lock(&mu_);
  for (auto& [uid, c] : users_) {
    for (auto* counter :
         {&c.requests, &c.hits, &c.misses, &c.joins, &c.rejected}) {
      counter->store(0);
    }
    c.compile_us = 0;
  }
}

std::string UserName(uid_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(uid, &pw, buffer, sizeof(buffer), &found) != 0 ||
      found == nullptr) {
    return "";
  }
  return pw.pw_name;
}

}  // namespace jitcache
