#ifndef JITCACHE_TESTS_TESTING_TEMP_DIR_H_
#define JITCACHE_TESTS_TESTING_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace jitcache::testing {

// A fresh directory under /tmp (short, so Unix socket paths fit), removed
// with everything in it on destruction (kept, for a look after a failure,
// when JITCACHE_KEEP_TEST_DIRS is set).
class TempDir {
 public:
  TempDir() {
    std::string templ = "/tmp/jctest.XXXXXX";
    path_ = mkdtemp(templ.data());
  }
  ~TempDir() {
    if (getenv("JITCACHE_KEEP_TEST_DIRS") != nullptr) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_TEMP_DIR_H_
