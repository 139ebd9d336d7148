#include "server/build/kept_file_sets.h"

#include <algorithm>

namespace jitcache {

std::shared_ptr<const FileSet> KeptFileSets::Find(const Digest& set) {
  absl::MutexLock lock(&mu_);
  auto it = sets_.find(set);
  if (it == sets_.end()) return nullptr;
  order_.erase(std::find(order_.begin(), order_.end(), set));
  order_.push_back(set);
  return it->second;
}

std::shared_ptr<const FileSet> KeptFileSets::Keep(const Digest& set,
                                                  FileSet files) {
  auto made = std::make_shared<const FileSet>(std::move(files));
  absl::MutexLock lock(&mu_);
  if (auto it = sets_.find(set); it != sets_.end()) return it->second;
  if (keep_ == 0) return made;
  sets_.emplace(set, made);
  order_.push_back(set);
  while (order_.size() > keep_) {
    sets_.erase(order_.front());
    order_.pop_front();
  }
  return made;
}

}  // namespace jitcache
