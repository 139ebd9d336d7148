#include "server/systemd/service_notifier.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace jitcache {

ServiceNotifier::ServiceNotifier(std::function<bool()> healthy)
    : healthy_(std::move(healthy)) {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) > 0 && usec > 0) {
    interval_ = absl::Microseconds(usec);
    thread_ = std::thread([this] { Watch(); });
  }
}

ServiceNotifier::~ServiceNotifier() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void ServiceNotifier::Ready(absl::string_view status) {
  sd_notify(0, absl::StrCat("READY=1\nSTATUS=", status).c_str());
}

void ServiceNotifier::Stopping() {
  sd_notify(0, "STOPPING=1\nSTATUS=shutting down");
}

void ServiceNotifier::Watch() {
  bool reported = false;
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval_ / 3)) {
    mu_.Unlock();
    const bool healthy = healthy_();
    if (healthy) {
      sd_notify(0, "WATCHDOG=1");
      reported = false;
    } else if (!reported) {
      JITCACHE_LOG(Error) << "health check failed; not pinging the watchdog";
      reported = true;
    }
    mu_.Lock();
  }
}

}  // namespace jitcache
