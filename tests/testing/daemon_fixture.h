#ifndef JITCACHE_TESTS_TESTING_DAEMON_FIXTURE_H_
#define JITCACHE_TESTS_TESTING_DAEMON_FIXTURE_H_

#include <memory>

#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/temp_dir.h"

namespace jitcache::testing {

// A real jitcached on dir_/s.sock with its store in dir_/store, and a
// connected client_, for each test.
class DaemonFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ =
        std::make_unique<DaemonProcess>(dir_.Sub("s.sock"), dir_.Sub("store"));
    ASSERT_TRUE(daemon_->Start().ok()) << daemon_->Log();
    client_ = std::make_unique<Client>(
        *Client::Connect({.socket_path = dir_.Sub("s.sock")}));
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<Client> client_;
};

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_DAEMON_FIXTURE_H_
